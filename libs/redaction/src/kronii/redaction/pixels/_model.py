"""What the image redactor hands back: boxes, findings without values, and the redacted image or none."""

from __future__ import annotations

from dataclasses import dataclass, field

from PIL import Image

from .._model import Level

__all__ = ["Box", "ImageFinding", "ImageRedaction"]


@dataclass(frozen=True, slots=True, order=True)
class Box:
    """A rectangle in pixels: x0, y0 inclusive, x1, y1 exclusive (Pillow's crop box convention)."""

    x0: int
    y0: int
    x1: int
    y1: int

    @property
    def width(self) -> int:
        return max(0, self.x1 - self.x0)

    @property
    def height(self) -> int:
        return max(0, self.y1 - self.y0)

    @property
    def area(self) -> int:
        return self.width * self.height

    @property
    def empty(self) -> bool:
        return self.area == 0

    def as_tuple(self) -> tuple[int, int, int, int]:
        return (self.x0, self.y0, self.x1, self.y1)

    def clip(self, width: int, height: int) -> Box:
        return Box(
            min(max(self.x0, 0), width),
            min(max(self.y0, 0), height),
            min(max(self.x1, 0), width),
            min(max(self.y1, 0), height),
        )

    def shift(self, dx: int, dy: int) -> Box:
        return Box(self.x0 + dx, self.y0 + dy, self.x1 + dx, self.y1 + dy)

    def pad(self, pixels: int) -> Box:
        return Box(self.x0 - pixels, self.y0 - pixels, self.x1 + pixels, self.y1 + pixels)

    def union(self, other: Box) -> Box:
        return Box(
            min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1)
        )

    @classmethod
    def of(cls, value: Box | tuple[int, int, int, int]) -> Box:
        return value if isinstance(value, Box) else cls(*(int(v) for v in value))


@dataclass(frozen=True, slots=True)
class ImageFinding:
    """One finding on screen: its type, who found it, and the filled boxes (output image coordinates).

    Never the value: the OCR text of a finding is not kept anywhere in a result.
    """

    type: str
    detector: str
    confidence: float
    boxes: tuple[Box, ...]


@dataclass(frozen=True, slots=True)
class ImageRedaction:
    """The redacted image, or None when it must not leave (level red): rejected, or something failed.

    `text` is the OCR text with placeholders in place of findings (empty when rejected);
    `masked_share` the share of the output's area that was filled; `ocr_ms` the time spent in Tesseract.
    """

    image: Image.Image | None
    level: Level
    reason: str
    findings: tuple[ImageFinding, ...] = ()
    masked_share: float = 0.0
    ocr_ms: float = 0.0
    text: str = field(default="", repr=False)
    # The share of the frame covered by words read with some confidence (what a capture's frame
    # scoring calls its text density), from the same reading.
    text_coverage: float = 0.0

    @property
    def rejected(self) -> bool:
        return self.image is None

    @property
    def boxes(self) -> tuple[Box, ...]:
        return tuple(box for finding in self.findings for box in finding.boxes)
