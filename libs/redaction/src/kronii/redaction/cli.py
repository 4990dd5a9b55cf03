"""`kronii redact`: clean text or a screenshot before sharing it.

    kronii redact notes.txt > clean.txt           # text from a file (or stdin) to stdout, placeholders in place
    kronii redact --json < notes.txt              # the findings and the level instead (never the values)
    kronii redact --image shot.png -o clean.png   # PNG or JPEG in, PNG out, every finding filled solid

Exit codes: 0 nothing found, 10 findings masked (the text is written with placeholders, and standard error says
how much was masked), 20 withheld (nothing written: an engine error, a red-listed --app, or, with --strict or a
share limit your --policy sets, what the pipeline's gate would withhold: a private key, a password, a text mostly
masked), 2 usage (a missing file, a bad policy, bad arguments).
The main `kronii` command runs `redact_command` (a click command); `python -m kronii.redaction.cli` runs the
same thing on its own. This library sits below kronii.launcher, so its sentences are click exceptions carrying
their exit code rather than kronii.launcher's CommandError: both print the sentence alone and exit with it.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import click

from ._engine import RedactionEngine
from ._model import Level, RedactionResult
from ._policy import PolicyError, RedactionPolicy
from ._stream import StreamResult, redact_stream

if TYPE_CHECKING:
    from .pixels import ImageRedaction

# `.pixels` (NumPy, Pillow, the OCR wrapper) is imported only by the paths that handle an image: a one-line text
# redaction must not pay for it at start-up.

__all__ = ["EXIT_AMBER", "EXIT_GREEN", "EXIT_RED", "EXIT_USAGE", "main", "redact_command"]

EXIT_GREEN, EXIT_AMBER, EXIT_RED, EXIT_USAGE = 0, 10, 20, 2
_EXIT = {Level.GREEN: EXIT_GREEN, Level.AMBER: EXIT_AMBER, Level.RED: EXIT_RED}
_DESCRIPTION = "Mask secrets and personal data in text (stdin or FILE) or in a screenshot (--image)."
_EPILOG = (
    "Exit codes: 0 nothing found, 10 findings masked, 20 withheld (nothing written: an error, or with --strict"
    " what the pipeline would withhold), 2 usage error."
)

Rectangle = tuple[int, int, int, int]


class RedactStopped(click.ClickException):
    """A sentence for standard error; the command exits 2 (usage) after it."""

    exit_code = EXIT_USAGE

    def show(self, file: IO[Any] | None = None) -> None:
        # The sentence names the problem; click's "Error:" prefix and usage would only bury it.
        click.echo(self.message, file=file, err=file is None)


class RedactWithheld(RedactStopped):
    """Nothing was written: the content must not leave (exit 20)."""

    exit_code = EXIT_RED


def _rectangle(text: str) -> Rectangle:
    try:
        x0, y0, x1, y1 = (int(part) for part in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not X0,Y0,X1,Y1 (four integers)") from None
    return (x0, y0, x1, y1)


def _rectangles(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """--region (one X0,Y0,X1,Y1 or none) and --mask (any number) as tuples of four integers."""
    if value is None or isinstance(value, str):
        return None if value is None else _rectangle(value)
    return tuple(_rectangle(text) for text in value)


@dataclass(frozen=True)
class _Request:
    """What `kronii redact` was asked to do, as its options gave it."""

    file: str | None
    image: str | None
    output: str | None
    as_json: bool
    policy: str | None
    app: str | None
    region: Rectangle | None
    masks: tuple[Rectangle, ...]
    strict: bool = False


# The pipeline's gate withholds what must not leave unread (titles, model prompts): a private key or a password
# even masked, a text mostly made of findings that probably hides more the detectors missed. Here a person asked
# for placeholders and reads the result, so the text is written masked and standard error says how much; the
# gate applies with --strict, and the share limit also when their policy file sets one itself.
_CLI_SHARE_LIMIT = 1.0


def _engine(policy_path: str | None, *, strict: bool) -> RedactionEngine:
    if policy_path is None:
        return RedactionEngine(
            RedactionPolicy() if strict else RedactionPolicy(red_share_threshold=_CLI_SHARE_LIMIT)
        )
    try:
        policy = RedactionPolicy.load(policy_path)
        if not strict and not RedactionPolicy.sets(policy_path, "red_share_threshold"):
            policy = dataclasses.replace(policy, red_share_threshold=_CLI_SHARE_LIMIT)
        return RedactionEngine(policy)
    except FileNotFoundError:
        raise RedactStopped(f"kronii redact: policy file {policy_path} does not exist") from None
    except (PolicyError, OSError) as error:
        raise RedactStopped(f"kronii redact: cannot use policy {policy_path}: {error}") from None


def _write_atomically(path: str, data: bytes) -> None:
    """Write to a temporary file beside `path`, then rename: a partial output never exists."""
    target = Path(path)
    try:
        with tempfile.NamedTemporaryFile(dir=target.parent or ".", prefix=".kronii-", delete=False) as handle:
            handle.write(data)
        os.replace(handle.name, target)
    except OSError as error:
        raise RedactStopped(f"kronii redact: cannot write {path} ({type(error).__name__})") from None


def _text_json(result: StreamResult) -> dict[str, Any]:
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


def _withheld(result: RedactionResult | StreamResult, *, strict: bool, share_limited: bool) -> bool:
    """Whether nothing may be written: no masked text exists (an error, a red-listed app), or the gate applies."""
    if result.level is not Level.RED:
        return False
    if not _found(result) or strict:
        return True
    return share_limited and result.reason.startswith("masked share")


def _found(result: RedactionResult | StreamResult) -> bool:
    return bool(result.counts) if isinstance(result, StreamResult) else bool(result.findings)


def _summary(result: StreamResult) -> str:
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(result.counts.items()))
    total = result.counts.total()
    noun = "finding" if total == 1 else "findings"
    return f"kronii redact: masked {total} {noun} ({kinds}): {result.masked_share:.0%} of the text"


def _open_input(path: str | None) -> IO[bytes]:
    if path is None:
        return sys.stdin.buffer
    try:
        return Path(path).open("rb")
    except FileNotFoundError:
        raise RedactStopped(f"kronii redact: {path} does not exist") from None
    except IsADirectoryError:
        raise RedactStopped(f"kronii redact: {path} is a directory, not a file") from None
    except OSError as error:
        raise RedactStopped(f"kronii redact: cannot read {path} ({type(error).__name__})") from None


def _reader(source: IO[bytes], path: str | None) -> Callable[[int], str]:
    """`read(n)`: about n characters of the input as UTF-8 (a broken byte is U+FFFD), "" at its end."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def read(size: int) -> str:
        while True:
            try:
                data = source.read(size)
            except OSError as error:
                raise RedactStopped(
                    f"kronii redact: cannot read {path or 'stdin'} ({type(error).__name__})"
                ) from None
            text = decoder.decode(data, final=not data)
            if text or not data:
                return text

    return read


def _run_text(request: _Request, engine: RedactionEngine, *, share_limited: bool) -> int:
    """The text is read and masked a window at a time (memory does not grow with it) into a temporary
    file, and written out only once the whole text's level allows it: nothing is written when it is
    withheld."""
    source = _open_input(request.file)
    with tempfile.TemporaryFile() as spool:
        try:

            def write(text: str) -> None:
                if not request.as_json:
                    spool.write(text.encode("utf-8"))

            result = redact_stream(
                engine, _reader(source, request.file), write, app=request.app, keep_findings=request.as_json
            )
        finally:
            if source is not sys.stdin.buffer:
                source.close()
        if request.as_json:
            click.echo(json.dumps(_text_json(result), indent=2))
            return _EXIT[result.level]
        if _withheld(result, strict=request.strict, share_limited=share_limited):
            raise RedactWithheld(f"kronii redact: withheld: {result.reason}")
        # Bytes as masked, not click.echo: it would strip escape sequences when stdout is not a terminal.
        spool.seek(0)
        sys.stdout.flush()
        shutil.copyfileobj(spool, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    if result.counts:
        click.echo(_summary(result), err=True)
    return EXIT_AMBER if result.counts else EXIT_GREEN


def _run_image(request: _Request, engine: RedactionEngine) -> int:
    if request.file is not None:
        raise RedactStopped("kronii redact: give either FILE (text) or --image IN, not both")
    if request.output is None and not request.as_json:
        raise RedactStopped("kronii redact: --image needs -o OUT.png (or --json for the findings alone)")
    from .pixels import png_bytes, redact_image

    assert request.image is not None  # the caller chose this path for it
    with _open_input(request.image) as source:
        try:
            data = source.read()
        except OSError as error:
            raise RedactStopped(
                f"kronii redact: cannot read {request.image} ({type(error).__name__})"
            ) from None
    result = redact_image(
        data, engine=engine, app=request.app, region=request.region, extra_regions=request.masks
    )
    if result.image is not None and request.output is not None:
        _write_atomically(request.output, png_bytes(result.image))
    if request.as_json:
        click.echo(json.dumps(_image_json(result, request.output), indent=2))
    if result.image is None:
        raise RedactWithheld(f"kronii redact: image withheld, nothing written: {result.reason}")
    return _EXIT[result.level]


def _run(request: _Request) -> int:
    if request.image is None and (request.output is not None or request.region is not None or request.masks):
        raise RedactStopped("kronii redact: -o, --region and --mask go with --image")
    engine = _engine(request.policy, strict=request.strict)
    if request.image is not None:
        return _run_image(request, engine)
    share_limited = request.policy is not None and RedactionPolicy.sets(request.policy, "red_share_threshold")
    return _run_text(request, engine, share_limited=share_limited)


@click.command(
    "redact", help=_DESCRIPTION, epilog=_EPILOG, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.argument("file", required=False, type=click.Path())
@click.option(
    "--image", type=click.Path(), metavar="IN", help="redact a PNG or JPEG screenshot instead of text"
)
@click.option(
    "-o", "--output", type=click.Path(), metavar="OUT", help="where to write the redacted PNG (with --image)"
)
@click.option("--json", "as_json", is_flag=True, help="print the level and findings (no values) as JSON")
@click.option("--policy", type=click.Path(), metavar="PATH", help="a TOML redaction policy")
@click.option("--app", metavar="APP_ID", help="the app the content comes from (red-listed apps: red)")
@click.option(
    "--strict",
    is_flag=True,
    help="withhold (exit 20, nothing written) what the pipeline would: a private key, a password, a text mostly masked",
)
@click.option(
    "--region", callback=_rectangles, metavar="X0,Y0,X1,Y1", help="with --image: redact only this crop"
)
@click.option(
    "--mask",
    "masks",
    callback=_rectangles,
    metavar="X0,Y0,X1,Y1",
    multiple=True,
    help="with --image: also fill this rectangle (repeatable)",
)
def redact_command(**options: Any) -> None:
    code = _run(_Request(**options))
    if code != EXIT_GREEN:
        raise SystemExit(code)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m kronii.redaction.cli`: `kronii redact` without the `kronii` command; returns the exit code."""
    try:
        redact_command.main(list(argv) if argv is not None else None, prog_name="kronii redact")
    except SystemExit as stopped:  # click ends every run with one, in standalone mode
        return (
            stopped.code
            if isinstance(stopped.code, int)
            else EXIT_GREEN
            if stopped.code is None
            else EXIT_RED
        )
    return EXIT_GREEN


if __name__ == "__main__":
    raise SystemExit(main())
