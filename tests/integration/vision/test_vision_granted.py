"""A granted vision plan runs while a person watches, and the person's key mid-plan stops it (issue 30).

The real things: a vision engine process reading a GTK3 form's accessibility tree under Xvfb, a real
input broker with its x11vnc, a real VNC viewer attached to it (vncdotool, in a process of its own)
so the session is interactive for the reason a person's would be, and the person's key from a device
of their own (tests/person_hands.py: the person's hands, never the core XTEST device automation
uses). The form prints every click, so what ran is what the window saw.

Without a grant the engine is refused and told what the person would type; after `kronii control
grant vision` (the person's grant, through the broker's local socket from a terminal) a plan runs
while the viewer stays attached; a second plan under the same grant is taken back by the person's
key in the middle of it, and nothing after that key runs."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import httpx
import pytest
from kronii.broker.adapters.vnc import decode_rfbauth

from tests.infra import InfraUrls
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, start_a11y_desktop, start_gtk_form
from tests.integration.vision.vision_service_support import VisionEngine, clicked, start_vision
from tests.mesh import wait_until
from tests.person_hands import PersonHands

# A VNC viewer in a process of its own (vncdotool's reactor is one per process): attached until its
# standard input closes.
VIEWER = """
import sys
from vncdotool import api
client = api.connect(sys.argv[1], password=sys.argv[2], timeout=10)
client.refreshScreen()
print("ATTACHED", flush=True)
sys.stdin.read()
client.disconnect()
api.shutdown()
"""


@pytest.fixture(scope="module")
def desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as started:
        yield started


@pytest.fixture(scope="module")
def engine(
    infra: InfraUrls, migrated_database: str, desktop: A11yDesktop, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[VisionEngine]:
    with start_vision(infra, migrated_database, desktop, tmp_path_factory.mktemp("granted")) as started:
        yield started


@pytest.fixture
def form(desktop: A11yDesktop, engine: VisionEngine) -> Iterator[GtkForm]:
    with start_gtk_form(desktop, FORM_SECRET) as started:
        deadline = time.monotonic() + 10
        while "Cancel" not in httpx.get(f"{engine.url}/v1/vision/context", timeout=30).text:
            assert time.monotonic() < deadline, "the engine never saw the form"
            time.sleep(0.1)
        yield started


@pytest.fixture
def viewer(engine: VisionEngine) -> Iterator[subprocess.Popen[str]]:
    """A person's VNC viewer attached to the broker's x11vnc, until the test ends."""
    broker = engine.broker
    ready = str(httpx.get(f"{broker.url}/readyz", timeout=10).json())
    marker = "x11vnc on 127.0.0.1:"
    assert marker in ready, ready
    port = int(ready.split(marker, 1)[1].split("'", 1)[0].split('"', 1)[0])
    password = decode_rfbauth((broker.folder / "data" / "broker" / "vnc" / "passwd").read_bytes())
    process = subprocess.Popen(
        [sys.executable, "-c", VIEWER, f"127.0.0.1::{port}", password],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ATTACHED"
        wait_until(lambda: broker.state()["interactive_reason"] == "viewer", 10, "the viewer counted")
        yield process
    finally:
        assert process.stdin is not None
        process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _safe_points(engine: VisionEngine) -> int:
    return sum(1 for row in engine.broker.journal() if row["event"] == "safe_point")


def test_a_granted_plan_runs_while_a_viewer_is_attached_and_the_persons_key_mid_plan_stops_it(
    engine: VisionEngine, form: GtkForm, desktop: A11yDesktop, viewer: subprocess.Popen[str]
) -> None:
    broker = engine.broker
    # Nobody granted: refused, and told what the person would type.
    refused = engine.wait_for(engine.plan("click the Cancel button")["plan_id"])
    assert refused["state"] == "failed" and "kronii control grant vision" in refused["reason"], refused
    assert not clicked(form.seen, "Cancel")

    granted = broker.grant("vision", seconds=120)
    ran = engine.wait_for(engine.plan("click the Cancel button")["plan_id"])

    assert ran["state"] == "done", ran
    form.expect(lambda line: line.startswith("CLICKED Cancel"))
    rows = [
        row for row in broker.journal() if row.get("actor") == "agent:vision" and row["event"] == "acquire"
    ]
    assert rows[-1]["row"] == "AG" and rows[-1]["outcome"] == "held", rows[-1]
    state = broker.state()
    # Still watched, still the person's grant as they gave it: the plan neither lengthened nor ended it.
    assert state["interactive_reason"] == "viewer" and state["holder"] == "vision"
    assert state["lease_expiry"] == granted["lease_expiry"] and state["epoch"] == granted["epoch"]

    # A plan of two steps under the same grant; the person presses a key during its 2 s wait.
    before = _safe_points(engine)
    plan = engine.plan("wait 2 s then click the Cancel button")
    wait_until(lambda: _safe_points(engine) > before, 10, "the wait's safe point")
    with PersonHands(desktop.display) as hands:
        hands.key("shift")
    stopped = engine.wait_for(plan["plan_id"])

    assert stopped["state"] == "stopped", stopped
    assert "took the desktop back" in stopped["reason"], stopped["reason"]
    assert len(stopped["results"]) == 1  # the wait ran; the click never did
    time.sleep(1.0)  # a settle window: a click still on its way would show up here
    assert sum(1 for line in form.seen if line.startswith("CLICKED Cancel")) == 1
    taken = [row for row in broker.journal() if row.get("row") == "U1"]
    seen = [(row["row"], row.get("actor")) for row in broker.journal()[-6:]]
    assert taken and taken[-1]["signal"] == "user_input_override", seen
    assert broker.state()["control_mode"] == "USER"
