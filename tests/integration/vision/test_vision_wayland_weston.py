"""On a Wayland compositor the vision engine cannot act on (weston: no screen copy, no IPC that says where
windows are), the engine says so in one sentence, in /readyz and to a plan request, and never falls back
to the X display beside it (an accessible Xvfb here, as XWayland would be): its windows are not the
person's desktop."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.infra import InfraUrls
from tests.integration.vision.vision_desktop import start_a11y_desktop
from tests.mesh import Proc, service_ports, start_service
from tests.wayland import start_weston

REFUSAL = (
    "Wayland (weston): vision needs the screen's frames and weston offers no screen copy "
    "(zwlr_screencopy_manager_v1): plans are refused here"
)


@pytest.fixture(scope="module")
def engine(
    infra: InfraUrls, migrated_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, Proc]]:
    folder: Path = tmp_path_factory.mktemp("vision-weston")
    with start_weston() as weston, start_a11y_desktop() as beside:
        env = service_ports("vision", {**beside.env, **infra.env()})
        env.update(
            WAYLAND_DISPLAY=str(weston.socket),
            KRONII_DATABASE_URL=migrated_database,
            KRONII_DATA_DIR=str(folder / "data"),
            KRONII_VISION_KEY_PATH=str(folder / "vision.key"),
            KRONII_VISION_USE_CAPTURE="false",
            KRONII_LOG_FORMAT="json",
        )
        with start_service("vision", env) as vision:
            yield vision.url, beside.display, vision.proc


def test_readyz_says_weston_offers_no_screen_copy_and_names_no_x_display(
    engine: tuple[str, str, Proc],
) -> None:
    url, x_display, _proc = engine
    body = httpx.get(f"{url}/readyz", timeout=10).json()
    display = body["dependencies"]["display"]
    assert display["ready"] is False and display["required"] is False, display
    assert display["detail"] == REFUSAL
    assert x_display not in display["detail"]


def test_a_plan_request_on_weston_is_refused_with_that_sentence(engine: tuple[str, str, Proc]) -> None:
    url, _x_display, _proc = engine
    response = httpx.post(f"{url}/v1/vision/plans", json={"intent": "click the OK button"}, timeout=30)
    assert response.status_code == 503, response.text
    assert REFUSAL in response.text
