"""`kronii redact`: clean text or a screenshot before sharing it.

    kronii redact notes.txt > clean.txt           # text from a file (or stdin) to stdout, placeholders in place
    kronii redact --json < notes.txt              # the findings and the level instead (never the values)
    kronii redact --image shot.png -o clean.png   # PNG or JPEG in, PNG out, every finding filled solid

Exit codes: 0 green (nothing found), 10 amber (findings masked), 20 red (nothing written: a secret that must
not leave at all, too much to mask, or an error), 2 usage (a missing file, a bad policy, bad arguments).
The main `kronii` command calls `add_redact_parser` and `run_redact`; `python -m kronii.redaction.cli` runs
the same thing on its own.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._engine import RedactionEngine
from ._model import Level, RedactionResult
from ._policy import PolicyError, RedactionPolicy

if TYPE_CHECKING:
    from .pixels import Box, ImageRedaction

# `.pixels` (NumPy, Pillow, the OCR wrapper) is imported only by the paths that handle an image: a one-line text
# redaction must not pay for it at start-up.

__all__ = ["EXIT_AMBER", "EXIT_GREEN", "EXIT_RED", "EXIT_USAGE", "add_redact_parser", "main", "run_redact"]

EXIT_GREEN, EXIT_AMBER, EXIT_RED, EXIT_USAGE = 0, 10, 20, 2
_EXIT = {Level.GREEN: EXIT_GREEN, Level.AMBER: EXIT_AMBER, Level.RED: EXIT_RED}
_DESCRIPTION = "Mask secrets and personal data in text (stdin or FILE) or in a screenshot (--image)."
_EPILOG = "exit codes: 0 nothing found, 10 findings masked, 20 withheld (nothing written), 2 usage error"


class _UsageError(Exception):
    """A problem with what the user asked for; its message is the sentence to print."""


def _box(text: str) -> Box:
    from .pixels import Box

    try:
        x0, y0, x1, y1 = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not X0,Y0,X1,Y1 (four integers)") from None
    return Box(x0, y0, x1, y1)


def _configure(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("file", nargs="?", metavar="FILE", help="text to redact (default: standard input)")
    parser.add_argument("--image", metavar="IN", help="redact a PNG or JPEG screenshot instead of text")
    parser.add_argument(
        "-o", "--output", metavar="OUT", help="where to write the redacted PNG (with --image)"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the level and findings (no values) as JSON"
    )
    parser.add_argument("--policy", metavar="PATH", help="a TOML redaction policy")
    parser.add_argument(
        "--app", metavar="APP_ID", help="the app the content comes from (red-listed apps: red)"
    )
    parser.add_argument(
        "--region", type=_box, metavar="X0,Y0,X1,Y1", help="with --image: redact only this crop"
    )
    parser.add_argument(
        "--mask",
        type=_box,
        action="append",
        default=[],
        metavar="X0,Y0,X1,Y1",
        help="with --image: also fill this rectangle (repeatable)",
    )
    parser.set_defaults(handler=run_redact)
    return parser


def add_redact_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add `redact` to a `kronii` command's subparsers (the action `add_subparsers` returned)."""
    parser = subparsers.add_parser("redact", help=_DESCRIPTION, description=_DESCRIPTION, epilog=_EPILOG)
    return _configure(parser)


def _engine(policy_path: str | None) -> RedactionEngine:
    if policy_path is None:
        return RedactionEngine()
    try:
        return RedactionEngine(RedactionPolicy.load(policy_path))
    except FileNotFoundError:
        raise _UsageError(f"kronii redact: policy file {policy_path} does not exist") from None
    except (PolicyError, OSError) as error:
        raise _UsageError(f"kronii redact: cannot use policy {policy_path}: {error}") from None


def _read_input(path: str | None) -> bytes:
    if path is None:
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise _UsageError(f"kronii redact: {path} does not exist") from None
    except IsADirectoryError:
        raise _UsageError(f"kronii redact: {path} is a directory, not a file") from None
    except OSError as error:
        raise _UsageError(f"kronii redact: cannot read {path} ({type(error).__name__})") from None


def _write_atomically(path: str, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename: a partial output never exists."""
    target = Path(path)
    try:
        with tempfile.NamedTemporaryFile(dir=target.parent or ".", prefix=".kronii-", delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, target)
    except OSError as error:
        raise _UsageError(f"kronii redact: cannot write {path} ({type(error).__name__})") from None


def _text_json(result: RedactionResult) -> dict[str, Any]:
    findings = [
        {
            "type": f.type,
            "start": f.start,
            "end": f.end,
            "detector": f.detector,
            "confidence": f.confidence,
            "placeholder": f.placeholder,
        }
        for f in result.findings
    ]
    return {
        "level": str(result.level),
        "reason": result.reason,
        "masked_share": result.masked_share,
        "findings": findings,
    }


def _image_json(result: ImageRedaction, output: str | None) -> dict[str, Any]:
    findings = [
        {
            "type": f.type,
            "detector": f.detector,
            "confidence": f.confidence,
            "boxes": [list(b.as_tuple()) for b in f.boxes],
        }
        for f in result.findings
    ]
    return {
        "level": str(result.level),
        "reason": result.reason,
        "masked_share": round(result.masked_share, 4),
        "ocr_ms": round(result.ocr_ms, 1),
        "output": output if result.image is not None else None,
        "findings": findings,
    }


def _run_text(args: argparse.Namespace, engine: RedactionEngine) -> int:
    text = _read_input(args.file).decode("utf-8", errors="replace")
    result = engine.redact(text, app=args.app)
    if args.json:
        print(json.dumps(_text_json(result), indent=2))
    elif result.level is Level.RED:
        print(f"kronii redact: withheld: {result.reason}", file=sys.stderr)
    else:
        sys.stdout.write(result.text)
        sys.stdout.flush()
    return _EXIT[result.level]


def _run_image(args: argparse.Namespace, engine: RedactionEngine) -> int:
    if args.file is not None:
        raise _UsageError("kronii redact: give either FILE (text) or --image IN, not both")
    if args.output is None and not args.json:
        raise _UsageError("kronii redact: --image needs -o OUT.png (or --json for the findings alone)")
    from .pixels import png_bytes, redact_image

    data = _read_input(args.image)
    result = redact_image(data, engine=engine, app=args.app, region=args.region, extra_regions=args.mask)
    if result.image is not None and args.output is not None:
        _write_atomically(args.output, png_bytes(result.image))
    if args.json:
        print(json.dumps(_image_json(result, args.output), indent=2))
    if result.image is None:
        print(f"kronii redact: image withheld, nothing written: {result.reason}", file=sys.stderr)
    return _EXIT[result.level]


def run_redact(args: argparse.Namespace) -> int:
    """Run `kronii redact` with parsed arguments; returns the exit code."""
    try:
        if args.image is None and (args.output is not None or args.region is not None or args.mask):
            raise _UsageError("kronii redact: -o, --region and --mask go with --image")
        engine = _engine(args.policy)
        return _run_image(args, engine) if args.image is not None else _run_text(args, engine)
    except _UsageError as error:
        print(error, file=sys.stderr)
        return EXIT_USAGE


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kronii redact", description=_DESCRIPTION, epilog=_EPILOG)
    return run_redact(_configure(parser).parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
