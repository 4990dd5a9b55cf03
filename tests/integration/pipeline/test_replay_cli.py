"""`kronii replay` on a small hand-written recording: what it would have notified, deferred and
cost; and exit code 2 with a sentence on a file that is not a recording."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from kronii.activity.v1 import activity_pb2 as apb


def _line(offset_ms: int, event: str, message: apb.FocusChanged | apb.TitleChanged) -> str:
    return json.dumps(
        {
            "offset_ms": offset_ms,
            "subject": f"kronii.activity.{event}",
            "type": message.DESCRIPTOR.full_name,
            "event": MessageToDict(message, preserving_proto_field_name=True),
        }
    )


def _sample(path: Path) -> Path:
    ide = apb.Focus(
        app_name="code", wm_class="Code", window_id=7, title="machine.py - kronii - Visual Studio Code"
    )
    # A build counter spinning in a title: churn, deferred without a model call. The deferral's
    # backoff ends at 60 s with a Tick round (observe, silent); the editor at 120 s is another app,
    # high priority, so it ends that cooldown and is suggested.
    lines = []
    for i in range(50):
        focus = apb.Focus(app_name="term", wm_class="XTerm", window_id=9, title=f"build {i}%")
        lines.append(_line(i * 20, "title_changed", apb.TitleChanged(focus=focus)))
    lines.append(_line(120_000, "focus_changed", apb.FocusChanged(current=ide, change="app")))
    path.write_text("\n".join(lines) + "\n")
    return path


def _kronii(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kronii.launcher.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_replay_prints_what_it_would_have_notified_deferred_and_cost(tmp_path: Path) -> None:
    # No safety-net Tick within the sample: the only runs are the ones the events open.
    result = _kronii("replay", str(_sample(tmp_path / "sample.jsonl")), "--tick-secs", "3600")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "notified: 1" in out and "Related tasks for machine.py in kronii" in out
    assert "deferred: 1 (title_churn 1)" in out
    assert "runs: 3" in out and "cost (rules): 7 model calls" in out

    estimated = _kronii(
        "replay", str(tmp_path / "sample.jsonl"), "--backend", "openai", "--json", "--tick-secs", "3600"
    )
    report = json.loads(estimated.stdout)
    assert report["model_calls"] == 7 and report["input_tokens"] > 100
    assert report["backend"] == "openai, estimated without calling"
    assert report["dropped_title_churn"] >= 45


def test_replay_of_a_bad_file_exits_2_with_a_sentence(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"offset_ms": 1, "subject": "x"}\n')
    result = _kronii("replay", str(bad))
    assert result.returncode == 2
    assert "is not a kronii recording: line 1" in result.stderr
    missing = _kronii("replay", str(tmp_path / "absent.jsonl"))
    assert missing.returncode == 3 and "there is no file" in missing.stderr
