"""Reindexing: embed what has no vector from the active model (new, or embedded by another model, whose vector
it replaces), into the store and the shared index."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbeddingError
from ..types import Embedder, ItemKind
from .index import IndexRegistry, VectorIndex

if TYPE_CHECKING:
    from ..store import Store

log = logging.getLogger(__name__)

KINDS = (ItemKind.MEMORY, ItemKind.EPISODE, ItemKind.QUESTION)
ProgressFn = Callable[[int, int], None]
KindProgressFn = Callable[[ItemKind, int, int], None]


def shared_index(
    indexes: IndexRegistry, store: Store, kind: ItemKind, embedder: Embedder, *, ann_threshold: int
) -> VectorIndex:
    """The index of `kind` for the embedder's model over `store`'s file, loaded from the store on first use."""
    model, dim = embedder.model_name, embedder.dimension
    return indexes.get(
        store.location,
        str(kind),
        model,
        dim,
        lambda: store.vectors.load(kind, model, dim),
        ann_threshold=ann_threshold,
    )


def reindex_all(
    store: Store,
    embedder: Embedder,
    indexes: IndexRegistry,
    *,
    ann_threshold: int,
    progress: KindProgressFn | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Embed every item of every kind that has no vector from the embedder's model; returns how many.

    One reindexer per database at a time: another one over the same file (an engine in another thread, or
    the command line) waits, then finds the work done. `progress(kind, done, total)` opens each kind with
    (kind, 0, 0) and follows each batch.
    """
    done = 0
    with indexes.reindex_lock(store.location):
        for kind in KINDS:
            if stop is not None and stop.is_set():
                break
            if not store.vectors.count_missing(kind, embedder.model_name, embedder.dimension):
                continue
            index = shared_index(indexes, store, kind, embedder, ann_threshold=ann_threshold)
            report = None if progress is None else _for_kind(progress, kind)
            if report is not None:
                report(0, 0)
            done += reindex(store, embedder, kind, report, index=index, stop=stop)
    return done


def _for_kind(progress: KindProgressFn, kind: ItemKind) -> ProgressFn:
    return lambda done, total: progress(kind, done, total)


def reindex(
    store: Store,
    embedder: Embedder,
    kind: ItemKind,
    progress: ProgressFn | None = None,
    *,
    index: VectorIndex | None = None,
    batch_size: int = 128,
    stop: threading.Event | None = None,
) -> int:
    """Embed every item of ``kind`` whose stored vector is missing or from another model/dimension.

    Vectors go to the store and, when given, to ``index``; ``progress(done, total)`` follows each batch.
    Returns how many items were embedded.
    """
    model, dim = embedder.model_name, embedder.dimension
    total = store.vectors.count_missing(kind, model, dim)
    done, after = 0, 0
    while total and (stop is None or not stop.is_set()):
        batch = store.vectors.missing_texts(kind, model, dim, batch_size, after_id=after)
        if not batch:
            break
        ids = [item_id for item_id, _ in batch]
        matrix = np.asarray(embedder.embed_batch([text for _, text in batch]), np.float32)
        if matrix.shape != (len(batch), dim):
            raise EmbeddingError(
                f"{model} returned shape {matrix.shape} for {len(batch)} texts, "
                f"expected dimension {dim}"
            )
        store.vectors.put(kind, model, list(zip(ids, matrix, strict=True)))
        if index is not None:
            index.add(np.asarray(ids, np.int64), matrix)
        done, after = done + len(batch), ids[-1]
        if progress is not None:
            progress(done, max(total, done))
    if done:
        log.info("reindexed %d %s items with %s", done, kind, model)
    return done
