"""Input and output: PNG and JPEG in, fully decoded; PNG out without the input's metadata."""

from __future__ import annotations

import io

import pytest
from kronii.redaction.pixels import ImageInputError, load_image, png_bytes
from PIL import Image, PngImagePlugin

from tests.unit.redaction_pixels.pixels_support import blank


def _encoded(image: Image.Image, fmt: str, **options: object) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt, **options)
    return buffer.getvalue()


@pytest.mark.parametrize("fmt", ["PNG", "JPEG"])
def test_png_and_jpeg_are_accepted(fmt: str) -> None:
    assert load_image(_encoded(blank(30, 20), fmt)).size == (30, 20)


def test_other_formats_are_refused() -> None:
    with pytest.raises(ImageInputError, match="only PNG and JPEG"):
        load_image(_encoded(blank(30, 20), "GIF"))


@pytest.mark.parametrize("data", [b"", b"not an image at all", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40])
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(ImageInputError, match="not a readable"):
        load_image(data)


def test_a_truncated_png_is_refused_rather_than_half_read() -> None:
    whole = _encoded(Image.effect_noise((300, 300), 60).convert("RGB"), "PNG")
    with pytest.raises(ImageInputError):
        load_image(whole[: len(whole) // 2])


def test_output_png_carries_no_metadata_from_the_input() -> None:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "alice@exemple.com")
    image = load_image(_encoded(blank(10, 10), "PNG", pnginfo=info))
    out = png_bytes(image)
    assert b"alice@exemple.com" not in out
    assert Image.open(io.BytesIO(out)).format == "PNG"
