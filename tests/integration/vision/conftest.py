"""Fixtures for the vision engine's AT-SPI tests: per test, a private Xvfb + openbox, a private session
bus (and the accessibility bus it activates), the GTK3 test form and a connected AtspiReader."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio
from kronii.vision.adapters.atspi import AtspiReader

from tests.integration.vision.vision_desktop import (
    FORM_TITLE,
    A11yDesktop,
    GtkForm,
    start_a11y_desktop,
    start_gtk_form,
    wait_for_window,
)

FORM_SECRET = "Kr0nii-s3cret-Tulip"


@pytest.fixture
def form_secret() -> str:
    return FORM_SECRET


@pytest.fixture
def a11y_desktop() -> Iterator[A11yDesktop]:
    with start_a11y_desktop() as desktop:
        yield desktop


@pytest.fixture
def gtk_form(a11y_desktop: A11yDesktop, form_secret: str) -> Iterator[GtkForm]:
    with start_gtk_form(a11y_desktop, form_secret) as form:
        yield form


@pytest_asyncio.fixture
async def reader(a11y_desktop: A11yDesktop, gtk_form: GtkForm) -> AsyncIterator[AtspiReader]:
    """An AtspiReader on the test desktop's bus, once the form is in the accessibility tree."""
    reader = AtspiReader(a11y_desktop.bus_address)
    await reader.connect()
    try:
        await wait_for_window(reader, FORM_TITLE)
        yield reader
    finally:
        await reader.close()
