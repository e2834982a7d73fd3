"""The local model's embeddings through ONNX Runtime (`retrieval.embedders.local_embeddings`): one
query's, and the background indexer's batches.

sentence-transformers on torch spends most of a short query's time in per-call and per-op
overhead (more than twice the time taken here: docs/benchmarks.md, design measurements); a
hybrid search waits for that embedding. The transformer of the loaded model is exported once with
torch's ONNX exporter (cached on disk by a hash of its weights and the library versions),
run on one thread, mean-pooled and normalized as the model's own pipeline does. Before it
is used, it must give the same vectors as the model itself on probe texts, one at a time
and padded together in a batch (cosine above `MIN_COSINE`): otherwise (another pooling, a
module it does not reproduce, the `onnx` and `onnxruntime` packages missing) the model's
own pipeline on torch is used.

A batch is tokenized once, its distinct texts sorted by length and run in groups of
`BATCH`, so that each group is padded to about its own texts' length (texts of one length
in one forward pass; padding is most of the work of unsorted groups of short texts). Batches
run in a session of their own on every core of the machine: the background indexer runs
them when the write path is quiet, or for its share of the time when it is not
(`retrieval.indexer.embedding_indexer`), and a batch on two cores embeds about 1.8 times as many
texts a second as on one (docs/benchmarks.md, design measurements).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

MIN_COSINE = 0.9999  # to the model's own vectors, on every probe text
BATCH = 16  # texts per forward pass of a batch (larger ones were slower per text, one thread)
PROBES = (
    "What did I say about the garden and the weather?",
    "ok",
    "Die Katze schläft auf dem Sofa, während es draußen regnet. 東京の天気は?",
    # Longer than most models' window: the truncation must match too.
    " ".join(f"word{i} and some filler text" for i in range(200)),
)


class QueryEncoder:
    """Embeds one text (a call) or several (`batch`); thread-safe (each call runs on its
    caller's thread)."""

    def __init__(
        self, session: Any, tokenizer: Any, max_length: int, batches: Any | None = None
    ) -> None:
        self._session = session
        self._batches = batches or session  # the session that runs `batch`
        self._tokenizer = tokenizer
        self._max_length = max_length
        self._inputs = [i.name for i in session.get_inputs()]
        self._pad = {"input_ids": int(getattr(tokenizer, "pad_token_id", None) or 0)}

    def with_batches(self, batches: Any) -> QueryEncoder:
        """The same encoder with its batches run by `batches` (a session)."""
        return QueryEncoder(self._session, self._tokenizer, self._max_length, batches)

    def __call__(self, text: str) -> np.ndarray:
        encoded = self._tokenizer(
            [text], truncation=True, max_length=self._max_length, return_tensors="np"
        )
        feed = {name: np.asarray(encoded[name], np.int64) for name in self._inputs}
        hidden: np.ndarray = self._session.run(None, feed)[0][0]  # (tokens, dim), no padding
        mean: np.ndarray = hidden.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        return mean / norm if norm else mean

    def batch(self, texts: Sequence[str]) -> np.ndarray:
        """The vectors of `texts` (one row each, in order); a text given twice is embedded
        once."""
        distinct = list(dict.fromkeys(texts))
        encoded = self._tokenizer(distinct, truncation=True, max_length=self._max_length)
        names = [n for n in self._inputs if n in encoded]
        ids = encoded["input_ids"]
        order = sorted(range(len(distinct)), key=lambda i: len(ids[i]))
        rows: list[np.ndarray] = [np.empty(0, np.float32)] * len(distinct)
        for start in range(0, len(order), BATCH):
            group = order[start : start + BATCH]
            width = max(len(ids[i]) for i in group)
            feed = {
                n: np.array(
                    [_padded(encoded[n][i], width, self._pad.get(n, 0)) for i in group], np.int64
                )
                for n in names
            }
            mask = np.array([_padded([1] * len(ids[i]), width, 0) for i in group], np.float32)
            hidden: np.ndarray = self._batches.run(None, feed)[0]  # (texts, tokens, dim)
            means = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
            norms = np.linalg.norm(means, axis=1, keepdims=True)
            means = means / np.where(norms == 0, 1, norms)
            for at, i in enumerate(group):
                rows[i] = means[at]
        where = {text: i for i, text in enumerate(distinct)}
        return np.stack([rows[where[t]] for t in texts]) if texts else np.empty((0, 0))


def _padded(values: list[int], width: int, pad: int) -> list[int]:
    return [*values, *[pad] * (width - len(values))]


def load(model: Any, int8_batches: bool = True) -> QueryEncoder | None:
    """An encoder that gives `model`'s (a SentenceTransformer) vectors for one text, or None
    when it cannot be made or does not match (logged); `int8_batches`: its batches run the
    model's int8 copy (`retrieval.embedders.onnx_int8`) when that is close enough to the model."""
    try:
        import onnxruntime  # noqa: F401  (the `embeddings` extra)
        import torch
    except ImportError:
        log.info("onnxruntime is not installed: queries are embedded with torch")
        return None
    try:
        transformer = _transformer(model)
        tokenizer = model.tokenizer
        max_length = int(model.max_seq_length)
        path = _exported(transformer, tokenizer, torch)
        encoder = QueryEncoder(
            _session(path, threads=1), tokenizer, max_length, _session(path, _cores())
        )
        worst = _worst_cosine(model, encoder)
    except Exception:  # any failure leaves queries on torch, never stops start-up
        log.warning("the ONNX query encoder could not be made: queries use torch", exc_info=True)
        return None
    if worst < MIN_COSINE:
        log.warning(
            "the ONNX query encoder differs from the model (cosine %.6f): queries use torch", worst
        )
        return None
    if int8_batches and isinstance(path, Path):  # not when the cache cannot be written
        return _with_int8_batches(model, encoder, path)
    return encoder


def _with_int8_batches(model: Any, encoder: QueryEncoder, exported: Path) -> QueryEncoder:
    """The encoder with its batches on the model's int8 copy, if that can be made and is
    close enough to the model; else the encoder as it is (logged)."""
    from runtime_svc.retrieval.embedders import onnx_int8

    try:
        int8 = encoder.with_batches(_session(onnx_int8.quantized(exported), _cores()))
        worst = _worst_cosine(model, int8, batches_only=True)
    except Exception:
        log.warning("the int8 copy of the model could not be made: batches use float32")
        return encoder
    if worst < onnx_int8.MIN_COSINE:
        log.warning(
            "the int8 copy of the model differs from it (cosine %.4f): batches use float32", worst
        )
        return encoder
    return int8


def _transformer(model: Any) -> Any:
    """The Hugging Face module inside the model's first (Transformer) module."""
    first = model[0]
    return getattr(first, "auto_model", None) or first.model


def _last_hidden(module: Any, names: list[str], torch: Any) -> Any:
    """`module` as a torch module of positional inputs that returns its token embeddings
    only (what mean pooling reads)."""

    class LastHidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = module

        def forward(self, *inputs: Any) -> Any:
            return self.inner(**dict(zip(names, inputs, strict=True))).last_hidden_state

    return LastHidden().eval()


def _exported(transformer: Any, tokenizer: Any, torch: Any) -> Path | bytes:
    """The ONNX file of `transformer`, exported now unless the cache has it (in memory when
    the cache cannot be written, as on a read-only file system)."""
    import onnxruntime

    names = list(tokenizer(PROBES[0], return_tensors="pt").keys())
    digest = hashlib.sha256()
    for version in (torch.__version__, onnxruntime.__version__, ",".join(names)):
        digest.update(version.encode() + b"\0")
    for key, tensor in sorted(transformer.state_dict().items()):
        digest.update(key.encode() + b"\0")
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    path = _cache_dir() / f"{digest.hexdigest()[:32]}.onnx"
    if path.exists():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    except OSError:
        buffer = io.BytesIO()
        _export(transformer, tokenizer, names, torch, buffer)
        return buffer.getvalue()
    os.close(fd)
    try:
        _export(transformer, tokenizer, names, torch, tmp)
        os.replace(tmp, path)  # atomic: processes exporting at once each write a whole file
    finally:
        Path(tmp).unlink(missing_ok=True)
    return path


def _export(transformer: Any, tokenizer: Any, names: list[str], torch: Any, to: Any) -> None:
    sample = tokenizer([PROBES[0]], return_tensors="pt")
    # The tracer warns that shapes it saw become constants: the probes check the result.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            _last_hidden(transformer, names, torch),
            tuple(sample[n] for n in names),
            to,
            input_names=names,
            output_names=["token_embeddings"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "token_embeddings"]},
            opset_version=17,
            dynamo=False,
        )


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentmem" / "onnx"


def _cores() -> int:
    """The cores this process may use: its affinity, and its CPU quota in a container (a
    pod limited to one CPU on a 16-core node runs its batches on one thread, not on sixteen
    that the quota throttles)."""
    import joblib

    return int(joblib.cpu_count())


def _session(model: Path | bytes, threads: int) -> Any:
    """A session on `threads` threads: one for a query (splitting one short text costs more
    than it saves, and leaves the other core to the database), the cores for batches."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    return ort.InferenceSession(
        model if isinstance(model, bytes) else str(model),
        options,
        providers=["CPUExecutionProvider"],
    )


def _worst_cosine(model: Any, encoder: QueryEncoder, batches_only: bool = False) -> float:
    """The least cosine between the model's vectors of the probes and the encoder's, one at a
    time and in one batch (padded to the longest); `batches_only`: in one batch only."""
    expected = model.encode(
        list(PROBES), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
    )
    got = [encoder.batch(list(PROBES))]
    if not batches_only:
        got.append(np.stack([encoder(t) for t in PROBES]))
    return float(min((expected * g).sum(axis=1).min() for g in got))
