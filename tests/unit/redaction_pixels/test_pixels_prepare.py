"""Preparing a frame for Tesseract: dark themes inverted, a scale from the text height, borders ignored."""

from __future__ import annotations

from kronii.redaction.pixels import OcrSettings
from kronii.redaction.pixels._ocr import band_cuts
from kronii.redaction.pixels._prepare import flatten, ink_rows, otsu_threshold, prepare, text_height
from PIL import Image, ImageDraw, ImageFont

from tests.unit.redaction_pixels.pixels_support import FONTS, render_screen


def _lines_image(size: int, *, border: bool = False) -> Image.Image:
    image = Image.new("L", (600, 10 * size), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(FONTS["sans"], size)
    for number in range(4):
        draw.text((20, size + number * 2 * size), "Quickly judge the pipeline", font=face, fill=0)
    if border:
        draw.line((0, 0, 0, image.height), fill=0)
        draw.line((image.width - 3, 0, image.width - 3, image.height), fill=0, width=2)
    return image


def test_otsu_threshold_falls_between_the_two_modes() -> None:
    histogram = [0] * 256
    histogram[30], histogram[40], histogram[220], histogram[230] = 500, 300, 4000, 2000
    assert 40 <= otsu_threshold(histogram) < 220


def test_dark_theme_is_inverted_to_dark_text_on_light() -> None:
    prepared = prepare(render_screen("mono", 14, "dark").image, OcrSettings())
    assert prepared.inverted
    histogram = prepared.image.histogram()
    assert sum(histogram[128:]) > 3 * sum(histogram[:128])


def test_light_theme_is_not_inverted() -> None:
    prepared = prepare(render_screen("mono", 14, "light").image, OcrSettings())
    assert not prepared.inverted
    assert sum(prepared.image.histogram()[128:]) > 3 * sum(prepared.image.histogram()[:128])


def test_otsu_output_is_black_and_white_and_the_default_stays_grey() -> None:
    screen = render_screen("sans", 14, "light").image
    binary = prepare(screen, OcrSettings(binarize=True)).image.getcolors()
    grey = prepare(screen, OcrSettings()).image.getcolors()
    assert binary is not None and {level for _, level in binary} == {0, 255}
    assert grey is not None and len(grey) > 2


def _binary(image: Image.Image) -> Image.Image:
    return image.point(lambda level: 255 if level > 127 else 0)


def test_text_height_follows_font_size() -> None:
    small = text_height(ink_rows(_binary(_lines_image(12))))
    large = text_height(ink_rows(_binary(_lines_image(24))))
    assert small is not None and large is not None
    assert 10 <= small <= 17 and 1.7 <= large / small <= 2.3


def test_vertical_borders_do_not_hide_the_gaps_between_lines() -> None:
    with_border = text_height(ink_rows(_binary(_lines_image(14, border=True))))
    assert with_border is not None
    assert with_border == text_height(ink_rows(_binary(_lines_image(14))))


def test_a_strip_without_the_frames_border_does_not_make_every_row_of_the_window_ink() -> None:
    framed = _lines_image(14, border=True)
    draw = ImageDraw.Draw(framed)
    draw.rectangle(
        (0, framed.height - 20, framed.width, framed.height), fill=255
    )  # under the frame: no border
    assert text_height(ink_rows(_binary(framed))) == text_height(ink_rows(_binary(_lines_image(14))))


def test_blank_image_has_no_text_height() -> None:
    assert text_height(ink_rows(Image.new("L", (100, 50), 255))) is None


def test_small_text_is_upscaled_large_text_downscaled_and_mid_text_left_alone() -> None:
    settings = OcrSettings()
    assert prepare(_lines_image(11).convert("RGB"), settings).scale > 1.4
    assert prepare(_lines_image(14).convert("RGB"), settings).scale == 1.0
    assert prepare(_lines_image(20).convert("RGB"), settings).scale == 1.0
    big = prepare(_lines_image(60).convert("RGB"), settings)
    assert big.scale == settings.min_scale
    assert big.image.width == round(600 * settings.min_scale)


def test_fixed_scale_is_applied_as_given() -> None:
    prepared = prepare(_lines_image(14).convert("RGB"), OcrSettings(scale=2.0))
    assert (prepared.scale, prepared.image.size) == (2.0, (1200, 280))


def test_transparent_pixels_are_flattened_on_white() -> None:
    image = Image.new("RGBA", (4, 4), (200, 0, 0, 0))  # red hidden under full transparency
    assert flatten(image).getpixel((1, 1)) == (255, 255, 255)


def test_bands_are_cut_on_blank_rows_only() -> None:
    ink = tuple((row % 20) < 15 for row in range(400))  # 15 rows of text, 5 blank, repeated
    cuts = band_cuts(ink, 2, 100)
    assert cuts[0] == 0 and cuts[-1] == 400 and len(cuts) == 3
    assert not ink[cuts[1]]


def test_a_band_is_cut_in_the_widest_gap_not_between_an_i_and_its_dot() -> None:
    ink = [True] * 400
    ink[200] = False  # a one-row gap inside a line, right at the ideal cut
    ink[206:212] = [False] * 6  # the gap between two lines, a little further
    assert band_cuts(tuple(ink), 2, 100) == [0, 209, 400]


def test_no_cut_when_no_blank_row_is_near_the_middle() -> None:
    assert band_cuts((True,) * 400, 2, 100) == [0, 400]


def test_small_images_stay_in_one_band() -> None:
    ink = tuple((row % 20) < 15 for row in range(150))
    assert band_cuts(ink, 4, 160) == [0, 150]
