"""Real Tesseract: screens that must not leave at all are withheld, with the reason, never returned."""

from __future__ import annotations

from kronii.redaction import Level, RedactionEngine, RedactionPolicy
from kronii.redaction.pixels import OcrSettings, redact_image

from tests.unit.redaction_pixels.pixels_support import Plant, render_screen

KEY_LINES = (
    "-----BEGIN OPENSSH PRIVATE KEY-----",
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    "QyNTUxOQAAACDkR2rGUfb5bLrHk8Rm2eXb3sV7CwJ0vDqkN3a1mLhYQAAAJgAAAAA",
    "-----END OPENSSH PRIVATE KEY-----",
)


def test_a_private_key_on_screen_withholds_the_image(engine: RedactionEngine) -> None:
    screen = render_screen("mono", 14, "dark", rows=KEY_LINES)
    result = redact_image(screen.image, engine=engine)
    assert result.image is None and result.level is Level.RED
    assert result.reason.startswith("text engine: must not leave") and "PRIVATE_KEY" in result.reason


def test_a_password_on_screen_withholds_the_image(engine: RedactionEngine) -> None:
    plants = (Plant("password", "db password: ", "Tr0ub4dor&3horse", " for deployment", ()),)
    result = redact_image(render_screen("sans", 16, "light", plants=plants).image, engine=engine)
    assert result.image is None and "PASSWORD" in result.reason


def test_a_screen_that_is_mostly_secrets_is_rejected_not_returned() -> None:
    engine = RedactionEngine(RedactionPolicy(max_masked_area=0.08))
    result = redact_image(render_screen("mono", 16, "light").image, engine=engine)
    assert result.image is None and result.level is Level.RED
    assert result.reason.startswith("masked share") and result.masked_share > 0.08
    assert {f.type for f in result.findings} >= {"EMAIL", "PHONE"}  # what would have been masked, no values


def test_tesseract_running_past_its_timeout_withholds_the_image(engine: RedactionEngine) -> None:
    result = redact_image(
        render_screen("sans", 14, "light").image, engine=engine, settings=OcrSettings(timeout_s=0.001)
    )
    assert result.image is None and result.reason == "ocr failed: RuntimeError"
