"""Tiny sentence-transformers models written to disk by the tests themselves (the machine has no model hub).

Two BERT layers of width 32 over a WordPiece vocabulary of a few hundred pieces: random weights, so what they say
about meaning is noise, but they load, tokenize, batch, export to ONNX and score through the same code as real
models, in a fraction of a second.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
TEXT = """
the a an i my me you your is are was were am do did to of in on at for with and or not what where who when how which
that this it we they he she her his our their have has had like live lives work works moved city tea coffee cat dog
name called job nurse doctor teacher cello piano guitar play plays learning favourite food ramen pizza porto lisbon
leeds berlin paris query passage represent sentence searching relevant passages document instruction answer question
friday deploy sqlite project memory
"""
WORDS = TEXT.split()
PROMPTS = {
    "query": "query: ",
    "document": "passage: ",
}
HIDDEN = 32


def vocabulary() -> dict[str, int]:
    """A WordPiece vocabulary: special tokens, whole words, and every letter and digit alone and as a suffix."""
    pieces = [*SPECIAL, *string.punctuation, *string.ascii_lowercase, *string.digits]
    pieces += [f"##{c}" for c in string.ascii_lowercase + string.digits]
    pieces += [w for w in dict.fromkeys(WORDS) if w not in pieces]
    return {piece: i for i, piece in enumerate(pieces)}


def _tokenizer() -> object:
    from transformers import BertTokenizer

    return BertTokenizer(vocab=vocabulary(), do_lower_case=True)


def _config(vocab_size: int) -> Any:
    from transformers import BertConfig

    # wide initial weights: the default (0.02) gives nearly one vector for every text
    return BertConfig(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        initializer_range=0.5,
    )


def write_tiny_embedder(
    folder: Path, *, prompts: dict[str, str] | None = None, pooling: str = "mean", seed: int = 0
) -> Path:
    """A sentence-transformers embedding model (BERT, `pooling` "mean" or "cls") with these `prompts` (e5-like
    "query: " / "passage: " when None; {} for none) saved at `folder`."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.base.modules import Normalize, Transformer
    from sentence_transformers.sentence_transformer.modules import Pooling
    from transformers import BertModel

    work = folder.parent / f".{folder.name}-hf"
    tokenizer: Any = _tokenizer()
    torch.manual_seed(seed)
    BertModel(_config(tokenizer.vocab_size)).save_pretrained(work)
    tokenizer.save_pretrained(work)
    transformer = Transformer(str(work), max_seq_length=64)
    pool = Pooling(HIDDEN, pooling_mode=pooling)
    model = SentenceTransformer(
        modules=[transformer, pool, Normalize()],
        device="cpu",
        prompts=PROMPTS if prompts is None else prompts,
    )
    model.save(str(folder))
    return folder


def write_tiny_cross_encoder(
    folder: Path, *, seed: int = 0, layers: int = 2, width: int = HIDDEN
) -> Path:
    """A sentence-transformers CrossEncoder (BERT with one output: a relevance score) saved at `folder`; more
    `layers` and `width` make it slower."""
    import torch
    from sentence_transformers import CrossEncoder
    from transformers import BertConfig, BertForSequenceClassification

    work = folder.parent / f".{folder.name}-hf"
    tokenizer: Any = _tokenizer()
    torch.manual_seed(seed)
    config: Any = BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=width,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * width,
        max_position_embeddings=512,
        initializer_range=0.5,
    )
    config.num_labels = 1
    BertForSequenceClassification(config).save_pretrained(work)
    tokenizer.save_pretrained(work)
    CrossEncoder(str(work), device="cpu", max_length=512).save(str(folder))
    return folder
