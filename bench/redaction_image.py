"""Image redaction: its cost on a real 1280x800 screenshot, and the recall and time of each OCR tuning choice.

- frame: an xterm maximised on Xvfb at 1280x800, full of shell, log and config text with planted secrets,
  captured with mss. Per run, in turn: one plain Tesseract pass (pytesseract.image_to_data on the RGB
  frame, default settings and default environment), the same pass with OMP_THREAD_LIMIT=1, and the whole
  redaction with default settings. Medians, ratios, and a read-back of the output (planted values still
  readable by a plain 2x-upscaled Tesseract pass: must be 0).
- tuning: planted values (drawn at random: a held-out set) rendered with Pillow in DejaVu Sans, Mono and
  Serif at 12-20 px, light and dark, and in editor-like windows (file tree, title, text, a column of notes);
  for each choice, the share of planted values whose pixels were all covered (recall), the median time per
  screen, the mean share of the screen masked (over-masking), and the time on the frame above.

- sizes: per font size (12, 14, 16, 20 px; DejaVu Sans, Mono and Serif, light and dark, SEEDS screens each),
  screens with fresh values of all ten kinds (the first five and the five seen readable in issue 12: IBAN,
  IPv6, ES DNI, Mailgun key, Azure SAS signature), redacted with the default settings: recall (planted values
  all of whose pixels were covered and none of whose fragments a plain 2x-upscaled Tesseract pass reads on the
  output), the values missed by kind, and the share of the ordinary words read on the input that are still
  read on the output (each occurrence counted: over-masking).

- desktop: a whole 1920x1080 Xvfb screen with six xterms side by side (xterm's default 6x13 bitmap font and
  DejaVu Sans Mono at 8-18 pt, light and dark), each showing fresh planted values between ordinary words,
  captured whole. The whole redaction's time next to one plain single-threaded Tesseract pass on the same
  image (ratio), and per window (font size): recall (planted values readable before and none of whose
  fragments is readable after, by a plain Tesseract pass on the window cropped and upscaled), and the share
  of the ordinary words readable before that stay readable after (over-masking).

- terminals: xterms in the fonts and colours issue 32 saw defeat redaction (bitmap 5x7/6x10, DejaVu Mono
  6-8 px, light and dark, grep --color, 2x HiDPI with an MRZ), by today's pipeline and the previous one in the
  same run: values readable after, ordinary words kept, per case class, and the time per frame
  (see bench/redaction_image_terminals.py).

Usage: python bench/redaction_image.py [--runs 5] [--skip-tuning] [--skip-frame] [--skip-desktop] [--skip-sizes]
       [--skip-terminals] [--baseline-rev REV]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from typing import Any

import pytesseract
from _common import machine, save
from kronii.redaction import RedactionEngine
from kronii.redaction.pixels import ImageRedaction, OcrSettings, redact_image
from PIL import Image
from redaction_image_terminals import BASELINE_REV, terminals

from tests.desktop import start_xvfb
from tests.unit.redaction_pixels.pixels_support import (
    PLANTS,
    SEEN_READABLE,
    coverage,
    grab,
    random_plants,
    random_seen_readable,
    read_back,
    readable_word_share,
    render_panes,
    render_screen,
    squeeze,
    xterm_showing,
)

DEFAULT = OcrSettings()
BASE = OcrSettings(
    psm=3, oem=3, binarize=False, normalize_polarity=False, scale=1.0, workers=1, tolerant=False
)
STEP1 = replace(BASE, tolerant=True)
STEP2 = replace(STEP1, normalize_polarity=True)
STEP3 = replace(STEP2, psm=6)
STEP4 = replace(STEP3, oem=1)
CHOICES: tuple[tuple[str, OcrSettings], ...] = (
    ("tesseract defaults on grey (psm 3, oem 3, scale 1, one process)", BASE),
    ("+ OCR tolerance (look-alikes, lenient patterns, widening)", STEP1),
    ("+ dark themes inverted", STEP2),
    ("+ psm 6", STEP3),
    ("  psm 11 instead of 6", replace(STEP2, psm=11)),
    ("+ oem 1", STEP4),
    ("  Otsu binarisation", replace(STEP4, binarize=True)),
    ("  no inverted-line retry", replace(STEP4, invert_lines=False)),
    ("  scale x2 fixed", replace(STEP4, scale=2.0)),
    ("  scale x1.5 fixed", replace(STEP4, scale=1.5)),
    (
        "  every frame scaled to 24 px lines",
        replace(STEP4, scale=None, small_text_px=24.0, large_text_px=24.0),
    ),
    ("  lines under 14 px scaled to 16 px", replace(STEP4, scale=None, target_text_px=16.0)),
    ("  lines under 14 px scaled to 20 px", replace(STEP4, scale=None, target_text_px=20.0)),
    ("+ lines under 14 px scaled to 24 px", replace(STEP4, scale=None)),
    ("+ bands in parallel, one process per CPU (default)", DEFAULT),
)
assert replace(STEP4, scale=None, workers=0) == DEFAULT, "the table must end at the default settings"
FONTS, SIZES, THEMES = ("sans", "mono", "serif"), (12, 14, 16, 20), ("light", "dark")
COVERED = 0.98
SEEDS = 2  # screens per style, each with fresh values
PANES = 4  # editor-like windows: file tree, title, text, a column of notes


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def _omp_limit(value: str | None) -> Iterator[None]:
    saved = os.environ.get("OMP_THREAD_LIMIT")
    if value is None:
        os.environ.pop("OMP_THREAD_LIMIT", None)
    else:
        os.environ["OMP_THREAD_LIMIT"] = value
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("OMP_THREAD_LIMIT", None)
        else:
            os.environ["OMP_THREAD_LIMIT"] = saved


def _timed(action: Callable[[], object]) -> tuple[float, float]:
    """Wall and child-CPU milliseconds of one call."""
    cpu, started = _children_cpu(), time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000, (_children_cpu() - cpu) * 1000


# ---- tuning ---------------------------------------------------------------------------------------


def _redact_timed(
    image: Image.Image, engine: RedactionEngine, settings: OcrSettings
) -> tuple[ImageRedaction, float, float]:
    """The redaction, its wall time and the CPU time of its Tesseract processes, in ms."""
    cpu, started = _children_cpu(), time.perf_counter()
    result = redact_image(image, engine=engine, settings=settings)
    return result, (time.perf_counter() - started) * 1000, (_children_cpu() - cpu) * 1000


def tuning(engine: RedactionEngine, frame_image: Image.Image | None) -> list[dict[str, Any]]:
    styles = [(font, size, theme) for font in FONTS for size in SIZES for theme in THEMES]
    screens = [
        render_screen(*style, plants=_all_kinds(seed * len(styles) + n))
        for seed in range(SEEDS)
        for n, style in enumerate(styles)
    ]
    screens += [render_panes(random_plants(1000 + n), THEMES[n % 2]) for n in range(PANES)]
    rows = []
    for label, settings in CHOICES:
        caught, total, times, shares = 0, 0, [], []
        missed: dict[str, int] = {}
        for screen in screens:
            result, wall, _ = _redact_timed(screen.image, engine, settings)
            times.append(wall)
            shares.append(result.masked_share)
            for planted in screen.planted:
                total += 1
                if result.image is not None and coverage(planted.box, result.boxes) >= COVERED:
                    caught += 1
                else:
                    missed[planted.name] = missed.get(planted.name, 0) + 1
        row: dict[str, Any] = {
            "choice": label,
            "recall": round(caught / total, 3),
            "caught": caught,
            "planted": total,
            "missed_by_type": missed,
            "median_ms_per_screen": round(statistics.median(times), 1),
            "mean_masked_share": round(statistics.fmean(shares), 3),
        }
        if frame_image is not None:
            result, wall, cpu = _redact_timed(frame_image, engine, settings)
            row["frame_ms"], row["frame_cpu_ms"] = round(wall, 1), round(cpu, 1)
            row["frame_types_found"] = len({f.type for f in result.findings} & FRAME_TYPES)
        print(
            f"{row['recall']:6.3f} {row['median_ms_per_screen']:7.1f} ms/screen "
            f"{row.get('frame_ms', float('nan')):7.0f} ms/frame ({row.get('frame_cpu_ms', float('nan')):5.0f} cpu) "
            f"{row.get('frame_types_found', '-')}/{len(FRAME_TYPES)}  {label}  missed={missed}",
            flush=True,
        )
        rows.append(row)
    return rows


def _all_kinds(seed: int) -> tuple[Any, ...]:
    return (*random_plants(seed), *random_seen_readable(seed))


# ---- per font size, all kinds ---------------------------------------------------------------------


def sizes(engine: RedactionEngine) -> dict[str, Any]:
    """Recall and readable-word share per font size, on screens with fresh values of all ten kinds."""
    figures: dict[str, Any] = {}
    for size in SIZES:
        caught, total, shares = 0, 0, []
        missed: dict[str, int] = {}
        for seed in range(SEEDS):
            for n, (font, theme) in enumerate((f, t) for f in FONTS for t in THEMES):
                screen = render_screen(
                    font, size, theme, plants=_all_kinds(7000 + 100 * seed + 10 * size + n)
                )
                result = redact_image(screen.image, engine=engine)
                after = read_back(result.image) if result.image is not None else ""
                squeezed = squeeze(after)
                shares.append(readable_word_share(read_back(screen.image), after))
                for planted in screen.planted:
                    total += 1
                    hidden = coverage(planted.box, result.boxes) >= COVERED and not any(
                        squeeze(fragment) in squeezed for fragment in planted.fragments
                    )
                    caught += hidden and result.image is not None
                    if not hidden or result.image is None:
                        missed[planted.name] = missed.get(planted.name, 0) + 1
        figures[f"{size}px"] = row = {
            "screens": len(shares),
            "planted": total,
            "recall": round(caught / total, 3),
            "missed_by_kind": missed,
            "readable_word_share_mean": round(statistics.fmean(shares), 3),
            "readable_word_share_min": round(min(shares), 3),
        }
        print(
            f"{size:2d} px: recall {row['recall']:.3f} ({caught}/{total}, missed {missed})  readable words "
            f"mean {row['readable_word_share_mean']:.2f} min {row['readable_word_share_min']:.2f} "
            f"on {len(shares)} screens",
            flush=True,
        )
    return figures


# ---- a real window --------------------------------------------------------------------------------

FRAME_SECRETS = (
    ("AKIAQ7RXWN3KPL5TZ2HM", ("AKIAQ7", "KPL5TZ2HM")),
    ("ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo", ("ghp_R7", "WmX9vLp4", "HsJ6dFa1")),
    ("maria.keller@fastmail.com", ("maria.keller", "fastmail")),
    ("4539 1488 0343 6467", ("4539", "0343 6467")),
    ("+44 20 7946 0958", ("7946 0958",)),
)
FRAME_TYPES = frozenset({"AWS_ACCESS_KEY_ID", "GITHUB_TOKEN", "EMAIL", "PAYMENT_CARD", "PHONE"})


def frame_text() -> str:
    """About 40 lines of a developer's terminal: commands, logs, config, with the planted secrets."""
    aws, github, email, card, phone = (value for value, _ in FRAME_SECRETS)
    lines = [
        "$ git log --oneline -5",
        "9f3c2a1 fix the retry budget in the deployment worker",
        "4b7e0d2 add latency histograms to the gateway service",
        "e1a9c55 bump the cache client to 4.2.1 for the rollout",
        "$ cat ~/.config/deploy/env",
        f"export AWS_ACCESS_KEY_ID={aws}",
        "export AWS_REGION=eu-west-1 DEPLOY_TARGET=staging",
        f"export GITHUB_TOKEN={github}",
        "$ kubectl get pods -n staging",
        "NAME                         READY   STATUS    RESTARTS   AGE",
        "gateway-7d9f8c6b5-x2k4p      1/1     Running   0          3h12m",
        "worker-5c4b7f9d8-m8n2q       1/1     Running   2          3h12m",
        "cache-0                      1/1     Running   0          5d",
        "$ tail -n 12 /var/log/deploy/rollout.log",
        "2025-05-14 09:12:03 INFO  rollout started for deployment gateway (revision 41)",
        "2025-05-14 09:12:04 INFO  health check passed on 3 of 3 replicas",
        f"2025-05-14 09:12:05 WARN  billing webhook retried for customer {email}",
        "2025-05-14 09:12:07 INFO  canary at 10 percent, error rate 0.02 percent",
        f"2025-05-14 09:12:09 INFO  payment method updated: card {card} (visa)",
        "2025-05-14 09:12:12 INFO  canary at 50 percent, p95 latency 182 ms",
        f"2025-05-14 09:12:15 INFO  on-call paged at {phone} for the deployment",
        "2025-05-14 09:12:18 INFO  rollout finished, 3 replicas updated",
        "$ make test",
        "ruff check .  ok    mypy --strict  ok    pytest -q  412 passed in 38.2s",
        "$ vim README.md",
    ]
    filler = [
        "the deployment pipeline promotes a build from staging to production after review",
        "metrics, traces and the audit log are kept for every control decision of the service",
        "the cache worker compacts its segments every night and reports the latency budget",
    ]
    while len(lines) < 40:
        lines.append(filler[len(lines) % len(filler)])
    return "\n".join(lines)


def capture_frame() -> Image.Image:
    """A 1280x800 screenshot of a maximised xterm full of text, taken with mss."""
    with (
        start_xvfb(screen="1280x800x24") as display,
        xterm_showing(display, frame_text(), size=11, maximized=True),
    ):
        return grab(display)


def frame(engine: RedactionEngine, image: Image.Image, runs: int) -> dict[str, Any]:
    rgb = image.convert("RGB")
    plain, plain_1, redact = [], [], []
    plain_cpu, plain_1_cpu, redact_cpu = [], [], []
    result: Any = None

    def run_redaction() -> None:
        nonlocal result
        result = redact_image(rgb, engine=engine)

    def plain_pass() -> None:
        pytesseract.image_to_data(rgb, output_type=pytesseract.Output.DICT)

    for _ in range(runs):
        with _omp_limit(None):
            wall, cpu = _timed(plain_pass)
        plain.append(wall)
        plain_cpu.append(cpu)
        with _omp_limit("1"):
            wall, cpu = _timed(plain_pass)
        plain_1.append(wall)
        plain_1_cpu.append(cpu)
        with _omp_limit(None):  # the redactor sets OMP_THREAD_LIMIT=1 itself when the environment does not
            wall, cpu = _timed(run_redaction)
        redact.append(wall)
        redact_cpu.append(cpu)
    assert result is not None
    leaked = []
    if result.image is not None:
        readable = squeeze(read_back(result.image))
        leaked = [
            value for value, fragments in FRAME_SECRETS if any(squeeze(f) in readable for f in fragments)
        ]
    median = statistics.median
    return {
        "size": list(image.size),
        "runs": runs,
        "plain_pass_ms": round(median(plain), 1),
        "plain_pass_cpu_ms": round(median(plain_cpu), 1),
        "plain_pass_omp1_ms": round(median(plain_1), 1),
        "plain_pass_omp1_cpu_ms": round(median(plain_1_cpu), 1),
        "redaction_ms": round(median(redact), 1),
        "redaction_cpu_ms": round(median(redact_cpu), 1),
        "redaction_ocr_ms": round(result.ocr_ms, 1),
        "ratio_to_plain_pass": round(median(redact) / median(plain), 3),
        "ratio_to_plain_pass_omp1": round(median(redact) / median(plain_1), 3),
        "target_ratio": 1.0,
        "level": str(result.level),
        "findings": sorted(finding.type for finding in result.findings),
        "masked_share": round(result.masked_share, 4),
        "planted": len(FRAME_SECRETS),
        "planted_still_readable": len(leaked),
        "all_runs_ms": {"plain": plain, "plain_omp1": plain_1, "redaction": redact},
    }


# ---- a whole desktop ------------------------------------------------------------------------------

DESKTOP_FONTS: tuple[tuple[str, int | None, str], ...] = (
    ("6x13 bitmap", None, "light"),
    ("mono 8 pt", 8, "dark"),
    ("mono 10 pt", 10, "light"),
    ("mono 12 pt", 12, "dark"),
    ("mono 14 pt", 14, "light"),
    ("mono 18 pt", 18, "dark"),
)


def _desktop_text(seed: int) -> tuple[str, tuple[Any, ...]]:
    plants = random_plants(5000 + seed)
    filler = (
        "review the staging pipeline before the release",
        "the cache worker restarted twice during the night",
        "merge request approved by the platform team",
    )
    lines: list[str] = []
    for n, plant in enumerate(plants):
        lines += [filler[n % len(filler)], plant.before + plant.value + plant.after]
    return "\n".join([*lines, filler[0]]), plants


def capture_desktop() -> tuple[Image.Image, list[tuple[str, Any, Any]]]:
    """A 1920x1080 screenshot of six xterms in a 2x3 grid; and per window its label, rectangle, plants."""
    windows: list[tuple[str, Any, Any]] = []
    with start_xvfb(screen="1920x1080x24") as display, ExitStack() as stack:
        for n, (label, size, theme) in enumerate(DESKTOP_FONTS):
            text, plants = _desktop_text(n)
            geometry = f"60x11+{20 + 960 * (n % 2)}+{20 + 355 * (n // 2)}"
            terminal = stack.enter_context(
                xterm_showing(
                    display, text, size=size or 12, theme=theme, geometry=geometry, bitmap_font=size is None
                )
            )
            windows.append((label, terminal.box, plants))
        return grab(display), windows


def _ordinary(text: str) -> list[str]:
    return [word for word in text.split() if word.isalpha() and len(word) >= 3]


def _window_scores(before: Image.Image, after: Image.Image | None, box: Any, plants: Any) -> dict[str, Any]:
    crop = box.as_tuple()
    seen = read_back(before.crop(crop))
    read_before = squeeze(seen).replace(",", ".")
    shown = [plant for plant in plants if any(squeeze(f) in read_before for f in plant.fragments)]
    text_after = read_back(after.crop(crop)) if after is not None else ""
    read_after = squeeze(text_after).replace(",", ".")
    leaked = [plant.name for plant in plants if any(squeeze(f) in read_after for f in plant.fragments)]
    words_before = [word for word in _ordinary(seen) if word in FILLER_WORDS]
    words_after = set(text_after.split())
    kept = sum(word in words_after for word in words_before)
    return {
        "planted": len(plants),
        "readable_before": len(shown),
        "still_readable": leaked,
        "recall": round(1 - len(leaked) / len(plants), 3),
        "ordinary_words_readable_before": len(words_before),
        "readable_word_share": round(kept / max(1, len(words_before)), 3),
    }


FILLER_WORDS = frozenset(
    _ordinary(
        "review the staging pipeline before the release the cache worker restarted twice during the night "
        "merge request approved by the platform team export key for deployment token mail about card "
        "billed call after"
    )
)


def desktop(engine: RedactionEngine, runs: int) -> dict[str, Any]:
    image, windows = capture_desktop()
    rgb = image.convert("RGB")
    plain, redact = [], []
    result: Any = None

    def run_redaction() -> None:
        nonlocal result
        result = redact_image(rgb, engine=engine)

    for _ in range(runs):
        with _omp_limit("1"):
            plain.append(
                _timed(lambda: pytesseract.image_to_data(rgb, output_type=pytesseract.Output.DICT))[0]
            )
        with _omp_limit(None):
            redact.append(_timed(run_redaction)[0])
    assert result is not None
    per_font = {label: _window_scores(rgb, result.image, box, plants) for label, box, plants in windows}
    median = statistics.median
    figures = {
        "size": list(image.size),
        "runs": runs,
        "plain_pass_omp1_ms": round(median(plain), 1),
        "redaction_ms": round(median(redact), 1),
        "ratio_to_plain_pass_omp1": round(median(redact) / median(plain), 3),
        "level": str(result.level),
        "masked_share": round(result.masked_share, 4),
        "findings": sorted(finding.type for finding in result.findings),
        "per_font": per_font,
    }
    for label, scores in per_font.items():
        print(
            f"{label:12} recall {scores['recall']:.2f} (readable before {scores['readable_before']}/"
            f"{scores['planted']}, still readable {scores['still_readable']})  "
            f"readable words {scores['readable_word_share']:.2f} of {scores['ordinary_words_readable_before']}",
            flush=True,
        )
    print(
        f"desktop {figures['size']}: redaction {figures['redaction_ms']} ms, plain 1-thread pass "
        f"{figures['plain_pass_omp1_ms']} ms, ratio {figures['ratio_to_plain_pass_omp1']}",
        flush=True,
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-tuning", action="store_true")
    parser.add_argument("--skip-frame", action="store_true")
    parser.add_argument("--skip-desktop", action="store_true")
    parser.add_argument("--skip-sizes", action="store_true")
    parser.add_argument("--skip-terminals", action="store_true")
    parser.add_argument("--baseline-rev", default=BASELINE_REV, help="the previous pipeline's commit")
    args = parser.parse_args()
    engine = RedactionEngine()
    figures: dict[str, Any] = {
        "machine": machine(),
        "default_settings": repr(DEFAULT),
        "plants": [p.name for p in (*PLANTS, *SEEN_READABLE)],
    }
    if not args.skip_terminals:
        figures["terminals"] = terminals(engine, args.runs, args.baseline_rev)
    if not args.skip_sizes:
        figures["sizes"] = sizes(engine)
    image = None if args.skip_frame else capture_frame()
    if image is not None:
        figures["frame"] = frame(engine, image, args.runs)
    if not args.skip_desktop:
        figures["desktop"] = desktop(engine, args.runs)
    if not args.skip_tuning:
        figures["tuning"] = tuning(engine, image)
    save("redaction_image", figures)


if __name__ == "__main__":
    main()
