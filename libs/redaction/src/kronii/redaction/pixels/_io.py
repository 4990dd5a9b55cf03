"""Reading PNG and JPEG input (fully decoded, so a corrupt file fails here and not half-way) and writing PNG."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

__all__ = ["ACCEPTED_FORMATS", "ImageInputError", "load_image", "png_bytes"]

ACCEPTED_FORMATS = frozenset({"PNG", "JPEG"})


class ImageInputError(ValueError):
    """An input that is not a readable PNG or JPEG image. The message names the problem, not the content."""


def load_image(source: bytes | str | Path) -> Image.Image:
    """Decode PNG or JPEG bytes (or a file of them) completely."""
    data = Path(source).read_bytes() if isinstance(source, str | Path) else bytes(source)
    try:
        with Image.open(io.BytesIO(data)) as opened:
            if opened.format not in ACCEPTED_FORMATS:
                raise ImageInputError(f"unsupported image format {opened.format}: only PNG and JPEG")
            opened.load()
            image = opened.copy()
    except ImageInputError:
        raise
    except Exception as error:
        raise ImageInputError(f"not a readable PNG or JPEG image ({type(error).__name__})") from None
    return image


def png_bytes(image: Image.Image) -> bytes:
    """The image as PNG, with no metadata carried over from any input."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()
