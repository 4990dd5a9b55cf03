"""Coloured text read on its own layer: what a grey conversion loses.

`grep --color` draws its matches in bold red on the terminal's background; syntax highlighting, prompts and
log levels draw words in colour. In grey, red (205, 0, 0) on a dark theme's (40, 42, 54) is 61 on 43: next
to no contrast, and Tesseract reads nothing there (seen: a GitHub token, an e-mail address, an IBAN and a
card number all left readable on a dark xterm by `grep --color=always`). The colour layer is each pixel's
chroma (its strongest channel less its weakest): coloured ink is dark on it, grey ink and grey backgrounds
(every theme's black, white and greys) are white. A block with coloured ink gets one more Tesseract pass on
that layer, and its words join the others' (their own lines, so the text engine sees them whole).

Coloured fills are not ink: a highlight behind text (grep's `mt=30;43`, a selection, a search match) is a
solid run, which the grey pass reads well already (dark text on a light colour; light text on a dark one by
Tesseract's inverted-line retry), and which on the layer would be a dark bar with the text in white, read
as garbage with boxes lines tall. So the layer keeps only coloured strokes: the coloured pixels less the
dense areas (where most of a square wider than any stroke is coloured: glyphs fill a third of their cells,
a highlight all of its run but its text's strokes). A block that is mostly coloured (a coloured panel) has
no layer either.
"""

from __future__ import annotations

from PIL import Image, ImageChops, ImageFilter, ImageOps

__all__ = ["chroma", "colour_layer"]

_CHROMA = 96  # the least chroma (0-255) of coloured ink: xterm's red and yellow have 205, a grey theme < 20
_MIN_PIXELS = 40  # fewer coloured pixels than this are an icon's or a cursor's, not a word's
_MIN_SHARE = 0.001  # of the block's pixels
_MAX_SHARE = 0.5  # a block this much coloured is a coloured background, read in grey
_GAIN = 2  # chroma to darkness: antialiased edges of coloured glyphs have half their colour's chroma
_FILL_RADIUS = 4  # the square (9x9) over which a fill's density is judged; strokes are thinner (2x bold: 4)
_FILL_DENSITY = 0.7  # of that square coloured: a fill (bold glyphs: about half)


def chroma(image: Image.Image) -> Image.Image:
    """Each pixel's strongest channel less its weakest (mode L)."""
    red, green, blue = image.convert("RGB").split()
    strongest = ImageChops.lighter(ImageChops.lighter(red, green), blue)
    weakest = ImageChops.darker(ImageChops.darker(red, green), blue)
    return ImageChops.subtract(strongest, weakest)


def colour_layer(block: Image.Image) -> Image.Image | None:
    """The block's coloured strokes, dark on white (RGB, for `prepare`), or None when it has too few or
    too many to be worth a pass."""
    spread = chroma(block)
    coloured = spread.point(lambda level: 255 if level >= _CHROMA else 0)
    density = coloured.filter(ImageFilter.BoxBlur(_FILL_RADIUS))
    dense = density.point(lambda level: 255 if level >= 255 * _FILL_DENSITY else 0)
    fills = dense.filter(ImageFilter.MaxFilter(2 * _FILL_RADIUS + 1))  # the fill's edges and corners too
    strokes = ImageChops.subtract(coloured, fills)
    count = strokes.histogram()[255]
    area = block.width * block.height
    if count < max(_MIN_PIXELS, _MIN_SHARE * area) or count > _MAX_SHARE * area:
        return None
    # Only the strokes' own pixels, at their chroma: their antialiased edges too (near them, in no fill).
    near = strokes.filter(ImageFilter.MaxFilter(3))
    ink = ImageChops.multiply(spread.point(lambda level: min(255, level * _GAIN)), near)
    return ImageOps.invert(ink).convert("RGB")
