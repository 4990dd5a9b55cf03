"""The llamacpp backend is an optional extra: without llama-cpp-python it says how to install it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from kronii.llm.llamacpp import MISSING_EXTRA, LlamaCppBackend, LlamaCppUnavailable


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None, reason="llama-cpp-python is installed")
def test_without_the_extra_the_backend_names_the_install_command(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    with pytest.raises(LlamaCppUnavailable) as raised:
        LlamaCppBackend(model)
    assert str(raised.value) == MISSING_EXTRA
    assert "pip install 'kronii[llamacpp]'" in str(raised.value)


def test_importing_the_module_does_not_need_llama_cpp() -> None:
    # The import above succeeded whether or not the extra is installed.
    assert LlamaCppBackend.name == "llamacpp"
