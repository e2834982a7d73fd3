"""The background indexer's copy of the local model with int8 weights (`retrieval.
index_precision: int8`, the default): ONNX Runtime's dynamic quantization of the exported
model's matrix products, each output channel with a scale of its own (the embedding table
and the normalizations stay float32), run by the indexer's batches only. A query keeps the
float32 model.

On the bench's sentences the int8 copy embeds about 1.8 times as many texts a second on two
cores, and its vectors are within cosine 0.98 of the model's (0.99 on average): a stored
vector moves by about what the model's own vectors of two paraphrases differ by, and the
paraphrase sets' recall@5 is unchanged (docs/benchmarks.md, design measurements). Before it
is used it must be that close on the probe texts (`MIN_COSINE`); otherwise the batches run
the float32 model. Its activations are quantized per forward pass, so a text's vector
depends a little on the texts embedded beside it (cosine 0.986 at least between two
batchings of one text). The copy is made once, next to the exported model (cached by the
same hash), written whole and renamed into place.
"""

from __future__ import annotations

import logging
import os
import tempfile
import warnings
from pathlib import Path

MIN_COSINE = 0.97  # to the model's own vectors, on every probe text


def quantized(exported: Path) -> Path:
    """The int8 copy of the exported model at `exported`, made now unless it is there."""
    path = exported.with_name(exported.stem + ".int8.onnx")
    if path.exists():
        return path
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".onnx.tmp")
    os.close(fd)
    root = logging.getLogger()
    root.addFilter(_its_advice)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantize_dynamic(
                exported,
                tmp,
                weight_type=QuantType.QInt8,
                per_channel=True,
                op_types_to_quantize=["MatMul"],
            )
        os.replace(tmp, path)  # atomic: processes quantizing at once each write a whole file
    finally:
        root.removeFilter(_its_advice)
        Path(tmp).unlink(missing_ok=True)
    return path


def _its_advice(record: logging.LogRecord) -> bool:
    """Drops the quantizer's advice to pre-process the model (it logs it on the root
    logger; it is for static quantization)."""
    return "onnxruntime" not in record.pathname
