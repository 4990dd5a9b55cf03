"""redact_image over a stand-in for Tesseract: which boxes are filled, levels, regions, area limits, no values."""

from __future__ import annotations

from collections.abc import Callable

from kronii.redaction import Level, PolicyHints, RedactionEngine, RedactionPolicy
from kronii.redaction.pixels import REGION_TYPE, Box, redact_image
from kronii.redaction.pixels._ocr import OCR_BORDER
from PIL import Image

from tests.unit.redaction_pixels.pixels_support import ONE_PASS, FakeWord, blank, uniform

Ocr = Callable[[list[FakeWord]], list[Image.Image]]


def _sentence(*texts: str, line: int = 1, x: int = 10, y: int = 20) -> list[FakeWord]:
    words = []
    for text in texts:
        words.append((text, Box(x, y, x + 9 * len(text), y + 14), line))
        x += 9 * len(text) + 9
    return words


def test_a_finding_is_filled_solid_and_its_neighbours_are_not(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    words = _sentence("mail", "maria.keller@fastmail.com", "about", "deployment")
    fake_ocr(words)
    image = blank(500, 60, (240, 240, 240))
    result = redact_image(image, engine=engine, settings=ONE_PASS)
    assert result.level is Level.AMBER and result.image is not None
    [finding] = result.findings
    assert (finding.type, finding.detector) == ("EMAIL", "email")
    email_box = words[1][1]
    assert finding.boxes == (email_box.pad(3),)
    assert uniform(result.image, finding.boxes[0])
    assert result.image.getpixel((words[0][1].x0 + 2, 25)) == (240, 240, 240)
    assert result.image.getpixel((words[2][1].x0 + 4, 25)) == (240, 240, 240)


def test_a_finding_of_several_words_is_one_bar_over_all_of_them(
    fake_ocr: Ocr, engine: RedactionEngine
) -> None:
    words = _sentence("card", "4539", "1488", "0343", "6467", "billed")
    fake_ocr(words)
    result = redact_image(blank(500, 60), engine=engine, settings=ONE_PASS)
    [finding] = result.findings
    assert finding.type == "PAYMENT_CARD"
    assert finding.boxes == (words[1][1].union(words[4][1]).pad(3),)


def test_nothing_found_is_green_with_the_pixels_unchanged(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(_sentence("review", "the", "deployment"))
    image = Image.effect_noise((120, 40), 40).convert("RGB")
    result = redact_image(image, engine=engine, settings=ONE_PASS)
    assert (result.level, result.findings, result.masked_share) == (Level.GREEN, (), 0.0)
    assert result.image is not None and result.image.tobytes() == image.tobytes()


def test_text_the_engine_grades_red_withholds_the_image(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(_sentence("password:", "hunter2hunter"))
    result = redact_image(blank(), engine=engine, settings=ONE_PASS)
    assert result.image is None and result.level is Level.RED
    assert "PASSWORD" in result.reason
    assert [finding.type for finding in result.findings] == ["PASSWORD"]


def test_a_private_key_spread_over_lines_withholds_the_image(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    words = (
        _sentence("-----BEGIN", "OPENSSH", "PRIVATE", "KEY-----", line=1, y=10)
        + _sentence("b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", line=2, y=30)
        + _sentence("-----END", "OPENSSH", "PRIVATE", "KEY-----", line=3, y=50)
    )
    fake_ocr(words)
    result = redact_image(blank(800, 80), engine=engine, settings=ONE_PASS)
    assert result.image is None and "PRIVATE_KEY" in result.reason


def test_too_much_to_mask_is_rejected_not_returned(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(_sentence("mail", "maria.keller@fastmail.com"))
    strict = RedactionPolicy(max_masked_area=0.05)
    result = redact_image(blank(300, 40), engine=engine, policy=strict, settings=ONE_PASS)
    assert result.image is None and result.level is Level.RED
    assert result.reason.startswith("masked share") and "above 0.05" in result.reason
    assert result.masked_share > 0.05


def test_the_engines_policy_limit_applies_when_no_policy_is_given(fake_ocr: Ocr) -> None:
    fake_ocr(_sentence("mail", "maria.keller@fastmail.com"))
    engine = RedactionEngine(RedactionPolicy(max_masked_area=0.05))
    assert redact_image(blank(300, 40), engine=engine, settings=ONE_PASS).image is None


def test_extra_regions_are_filled_whatever_ocr_reads(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(_sentence("review", "the", "deployment"))
    image = Image.effect_noise((200, 100), 60).convert("RGB")
    result = redact_image(image, engine=engine, extra_regions=[(20, 50, 120, 70)], settings=ONE_PASS)
    assert result.level is Level.AMBER and result.image is not None
    [finding] = result.findings
    assert (finding.type, finding.boxes) == (REGION_TYPE, (Box(20, 50, 120, 70),))
    assert uniform(result.image, Box(20, 50, 120, 70))
    assert result.masked_share == (100 * 20) / (200 * 100)


def test_a_region_limits_ocr_and_output_to_that_crop(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    seen = fake_ocr(_sentence("mail", "maria.keller@fastmail.com", x=5, y=5))
    image = Image.effect_noise((640, 480), 60).convert("RGB")
    result = redact_image(
        image,
        engine=engine,
        region=(100, 200, 500, 260),
        extra_regions=[(90, 250, 120, 300)],
        settings=ONE_PASS,
    )
    assert [seen_image.size for seen_image in seen] == [(400 + 2 * OCR_BORDER, 60 + 2 * OCR_BORDER)]
    assert result.image is not None and result.image.size == (400, 60)
    assert result.findings[-1].boxes == (Box(0, 50, 20, 60),)  # moved into the crop, clipped to it
    assert result.image.getpixel((399, 0)) == image.getpixel((499, 200))


def test_a_red_listed_app_is_withheld_without_reading_it(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    seen = fake_ocr(_sentence("review"))
    result = redact_image(blank(), engine=engine, app="org.keepassxc.KeePassXC", settings=ONE_PASS)
    assert result.image is None and result.reason == "content of a red-listed app"
    assert seen == []


def test_plugin_hints_reach_the_text_engine(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(_sentence("Project", "Nightingale", "launch", "plan"))
    result = redact_image(
        blank(500, 60), engine=engine, hints=PolicyHints(deny_terms=("Nightingale",)), settings=ONE_PASS
    )
    assert [finding.type for finding in result.findings] == ["DENIED"]


def test_results_carry_no_values(fake_ocr: Ocr, engine: RedactionEngine) -> None:
    fake_ocr(
        _sentence("mail", "maria.keller@fastmail.com", "token", "ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo")
    )
    result = redact_image(blank(900, 60), engine=engine, settings=ONE_PASS)
    assert {finding.type for finding in result.findings} == {"EMAIL", "GITHUB_TOKEN"}
    shown = repr(result) + repr(result.findings)
    assert "maria" not in shown and "ghp_R7" not in shown and "fastmail" not in shown
    assert "maria" not in result.text and "[EMAIL_1]" in result.text


def test_the_text_hides_what_the_image_hides_including_a_widened_token_piece(
    fake_ocr: Ocr, engine: RedactionEngine
) -> None:
    fake_ocr(_sentence("token", "ghp_R7kq2WmX9vLp4TzN8bYc", "3Hs|6dFa1QeU5gVo", "deployment"))
    result = redact_image(blank(700, 60), engine=engine, settings=ONE_PASS)
    assert result.text == "token [GITHUB_TOKEN_1] deployment"
    [bar] = {box for finding in result.findings for box in finding.boxes}  # one bar over both pieces
    assert bar.x0 < 10 + 9 * 6 + 5 and bar.x1 > 10 + 9 * 6 + 9 * 24 + 9 + 9 * 16
