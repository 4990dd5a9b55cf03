"""HiDPI for real: Xvfb at 192 DPI, GTK3 at GDK_SCALE=2, so AT-SPI reports logical pixels and the X
server counts device pixels. An area that offers no accessibility action can only be clicked by its
bounds through the broker; the click lands on it only if the logical-to-screen conversion is right.
The engine itself runs with GDK_SCALE=1: it must find the scale from the window (its AT-SPI extents
against its X geometry), not from its own environment."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra import InfraUrls
from tests.integration.vision.conftest import FORM_SECRET
from tests.integration.vision.vision_desktop import A11yDesktop, GtkForm, start_a11y_desktop, start_gtk_form
from tests.integration.vision.vision_service_support import VisionEngine, start_vision


@pytest.fixture
def hidpi_desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop(["-dpi", "192"], {"GDK_SCALE": "2"}) as desktop:
        yield desktop


@pytest.fixture
def hidpi_form(hidpi_desktop: A11yDesktop) -> Iterator[GtkForm]:
    with start_gtk_form(hidpi_desktop, FORM_SECRET, hot_zone=True) as form:
        yield form


@pytest.fixture
def hidpi_vision(
    infra: InfraUrls, migrated_database: str, hidpi_desktop: A11yDesktop, hidpi_form: GtkForm, tmp_path: Path
) -> Iterator[VisionEngine]:
    with start_vision(
        infra,
        migrated_database,
        hidpi_desktop,
        tmp_path,
        settings={"KRONII_VISION_NOTIFY": "false", "GDK_SCALE": "1"},
    ) as engine:
        yield engine


def test_a_bounds_click_at_gdk_scale_2_lands_on_the_element_through_the_broker(
    hidpi_vision: VisionEngine, hidpi_form: GtkForm
) -> None:
    plan = hidpi_vision.plan("click the Hot Zone")
    done = hidpi_vision.wait_for(plan["plan_id"])
    assert done["state"] == "done", done
    assert "through the broker" in done["results"][0]["how"], done["results"]
    hidpi_form.expect(lambda line: line == "CLICKED Hot Zone")


def test_a_semantic_click_at_gdk_scale_2_still_fires_the_buttons_handler(
    hidpi_vision: VisionEngine, hidpi_form: GtkForm
) -> None:
    plan = hidpi_vision.plan("click the Cancel button")
    assert hidpi_vision.wait_for(plan["plan_id"])["state"] == "done"
    hidpi_form.expect(lambda line: line.startswith("CLICKED Cancel"))
