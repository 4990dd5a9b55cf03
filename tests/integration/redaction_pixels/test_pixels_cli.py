"""`kronii redact` run as a person would, through `python -m kronii.redaction.cli`: exit codes, JSON, files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.unit.redaction_pixels.pixels_support import PLANTS, read_back, render_screen, squeeze

PRIVATE_KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n"


def kronii_redact(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kronii.redaction.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_clean_text_passes_through_unchanged_with_exit_0() -> None:
    done = kronii_redact(stdin="review the deployment\n")
    assert (done.returncode, done.stdout, done.stderr) == (0, "review the deployment\n", "")


def test_findings_are_replaced_by_placeholders_with_exit_10() -> None:
    done = kronii_redact(stdin="mail maria.keller@fastmail.com about the deployment\n")
    assert done.returncode == 10
    assert done.stdout == "mail [EMAIL_1] about the deployment\n"


def test_a_file_argument_is_read_instead_of_stdin(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("card 4539 1488 0343 6467\n")
    done = kronii_redact(str(path), stdin="ignored")
    assert (done.returncode, done.stdout) == (10, "card [PAYMENT_CARD_1]\n")


def test_a_private_key_is_withheld_with_strict_exit_20_and_nothing_on_stdout() -> None:
    done = kronii_redact("--strict", stdin=PRIVATE_KEY)
    assert (done.returncode, done.stdout) == (20, "")
    assert "PRIVATE_KEY" in done.stderr and "b3Blbn" not in done.stderr


def test_json_shows_level_and_findings_but_never_values() -> None:
    done = kronii_redact(
        "--json", stdin="token ghp_R7kq2WmX9vLp4TzN8bYc3HsJ6dFa1QeU5gVo for maria.keller@fastmail.com"
    )
    assert done.returncode == 10
    report = json.loads(done.stdout)
    assert report["level"] == "amber"
    assert [(f["type"], f["start"], f["end"]) for f in report["findings"]] == [
        ("GITHUB_TOKEN", 6, 46),
        ("EMAIL", 51, 76),
    ]
    assert set(report["findings"][0]) == {"type", "start", "end", "detector", "confidence", "placeholder"}
    assert "ghp_R7" not in done.stdout and "maria" not in done.stdout


def test_a_missing_file_is_a_usage_error_with_a_sentence(tmp_path: Path) -> None:
    done = kronii_redact(str(tmp_path / "nope.txt"))
    assert done.returncode == 2
    assert done.stderr.strip() == f"kronii redact: {tmp_path / 'nope.txt'} does not exist"
    assert "Traceback" not in done.stderr


def test_a_policy_file_is_loaded(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[deny]\nterms = ["Nightingale"]\n[allow]\nvalues = ["ci@exemple.com"]\n')
    done = kronii_redact("--policy", str(policy), stdin="Nightingale mails ci@exemple.com\n")
    assert (done.returncode, done.stdout) == (10, "[DENIED_1] mails ci@exemple.com\n")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "does not exist"),
        ("max_masked_area = 3\n", "max_masked_area must be between 0 and 1"),
        ("x = [", "not valid TOML"),
    ],
)
def test_a_bad_policy_is_a_usage_error(tmp_path: Path, content: str | None, message: str) -> None:
    policy = tmp_path / "policy.toml"
    if content is not None:
        policy.write_text(content)
    done = kronii_redact("--policy", str(policy), stdin="hello\n")
    assert done.returncode == 2 and message in done.stderr


def test_bad_arguments_are_a_usage_error(tmp_path: Path) -> None:
    assert kronii_redact("--no-such-flag").returncode == 2
    assert kronii_redact("-o", str(tmp_path / "x.png"), stdin="hi").returncode == 2
    assert kronii_redact("--image", str(tmp_path / "in.png")).returncode == 2  # no -o and no --json


def test_an_image_is_cleaned_into_a_png(tmp_path: Path) -> None:
    source, output = tmp_path / "shot.jpg", tmp_path / "clean.png"
    render_screen("sans", 16, "light").image.save(source, format="JPEG", quality=90)
    done = kronii_redact("--image", str(source), "-o", str(output))
    assert done.returncode == 10, done.stderr
    with Image.open(output) as cleaned:
        assert cleaned.format == "PNG"
        readable = squeeze(read_back(cleaned.convert("RGB")))
    for plant in PLANTS:
        assert [fragment for fragment in plant.fragments if squeeze(fragment) in readable] == []


def test_image_json_lists_findings_and_boxes(tmp_path: Path) -> None:
    source, output = tmp_path / "shot.png", tmp_path / "clean.png"
    render_screen("mono", 14, "dark").image.save(source)
    done = kronii_redact("--image", str(source), "-o", str(output), "--json")
    assert done.returncode == 10
    report = json.loads(done.stdout)
    assert report["level"] == "amber" and report["output"] == str(output) and output.exists()
    assert {"EMAIL", "PAYMENT_CARD", "PHONE"} <= {f["type"] for f in report["findings"]}
    for finding in report["findings"]:
        assert set(finding) == {"type", "detector", "confidence", "boxes"}
        assert all(len(box) == 4 and box[0] < box[2] and box[1] < box[3] for box in finding["boxes"])
    assert "maria" not in done.stdout and "4539" not in done.stdout


def test_a_rejected_image_writes_no_file_and_exits_20(tmp_path: Path) -> None:
    source, output = tmp_path / "shot.png", tmp_path / "clean.png"
    render_screen("mono", 16, "light").image.save(source)
    policy = tmp_path / "policy.toml"
    policy.write_text("max_masked_area = 0.02\n")
    done = kronii_redact("--image", str(source), "-o", str(output), "--policy", str(policy))
    assert done.returncode == 20
    assert not output.exists()
    assert "withheld" in done.stderr and "masked share" in done.stderr


def test_a_corrupt_image_writes_no_file_and_exits_20(tmp_path: Path) -> None:
    source, output = tmp_path / "shot.png", tmp_path / "clean.png"
    source.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    done = kronii_redact("--image", str(source), "-o", str(output))
    assert (done.returncode, output.exists()) == (20, False)
    assert done.stderr.strip() == (
        "kronii redact: image withheld, nothing written: input failed: not a readable PNG or JPEG image (UnidentifiedImageError)"
    )
