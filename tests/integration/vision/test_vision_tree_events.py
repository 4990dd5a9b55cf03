"""The tree is read again when the toolkit says it changed, not on every look: on the real GTK3 form,
a second look with no object event reuses the last walk; a relabelled button (its name-change event)
makes the next look walk and see the new name; a fresh look always walks."""

from __future__ import annotations

import asyncio
import time

import pytest
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.desktop import DesktopTree

from tests.integration.vision.vision_desktop import FORM_TITLE, A11yDesktop, GtkForm, wait_for_window


def _names(nodes: tuple) -> set[str]:  # type: ignore[type-arg]
    return {node.name for node in nodes}


@pytest.mark.asyncio
async def test_an_object_event_not_a_timer_makes_the_next_look_walk_the_tree(
    a11y_desktop: A11yDesktop, gtk_form: GtkForm
) -> None:
    probe = AtspiReader(a11y_desktop.bus_address)
    await probe.connect()
    await wait_for_window(probe, FORM_TITLE)
    await probe.close()
    tree = DesktopTree(AtspiReader(a11y_desktop.bus_address), max_age_s=60.0)
    try:
        first = await tree.snapshot()
        await asyncio.sleep(0.3)  # events of the form's own start settle
        settled = await tree.snapshot()
        walks = tree.walks
        again = await tree.snapshot()
        assert again is settled and tree.walks == walks and tree.reused >= 1
        assert "Cancel" in _names(first)
        gtk_form.send("relabel Cancel Abort")
        deadline = time.monotonic() + 5
        seen = again
        while "Abort" not in _names(seen):
            assert time.monotonic() < deadline, "the relabel's event never made a look walk the tree"
            await asyncio.sleep(0.05)
            seen = await tree.snapshot()
        assert tree.walks > walks
        walks = tree.walks
        await tree.snapshot(fresh=True)
        assert tree.walks == walks + 1
    finally:
        await tree.close()
