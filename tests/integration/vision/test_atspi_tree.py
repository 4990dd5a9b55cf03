"""AtspiReader against a real desktop: Xvfb + openbox, a private session bus and its AT-SPI buses, and
a GTK3 form. No mocks: every node, action and event goes through at-spi2-core and GTK's atk-bridge."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import time

import pytest
from kronii.vision.adapters.atspi import AtspiReader
from kronii.vision.adapters.atspi_bus import AccessibilityError
from kronii.vision.adapters.atspi_tree import decode_states
from kronii.vision.core.context import Bounds, RawNode

from tests.integration.vision.vision_desktop import (
    FORM_TITLE,
    A11yDesktop,
    GtkForm,
    client_rect,
    form_window_id,
    start_gtk_form,
)

SCREEN = Bounds(0, 0, 1024, 768)


def only(nodes: tuple[RawNode, ...], role: str, name: str) -> list[RawNode]:
    return [node for node in nodes if node.role == role and node.name == name]


def form_nodes(nodes: tuple[RawNode, ...]) -> dict[str, list[RawNode]]:
    return {
        "frame": only(nodes, "frame", FORM_TITLE),
        "name": only(nodes, "text", "Name"),
        "password": only(nodes, "password text", "Password"),
        "ok": only(nodes, "push button", "OK"),
        "cancel": only(nodes, "push button", "Cancel"),
    }


async def test_the_form_and_its_controls_are_read_with_roles_names_and_screen_extents(
    reader: AtspiReader, a11y_desktop: A11yDesktop
) -> None:
    nodes = await reader.snapshot()
    found = form_nodes(nodes)
    assert {key: len(value) for key, value in found.items()} == {
        "frame": 1, "name": 1, "password": 1, "ok": 2, "cancel": 1,
    }  # fmt: skip
    client = client_rect(a11y_desktop.display, form_window_id(a11y_desktop.display))
    frame = found["frame"][0]
    assert frame.bounds is not None and SCREEN.contains(frame.bounds)
    # GTK reports a toplevel's extents with the window manager's frame around the client area.
    assert frame.bounds.contains(client)
    controls = [*found["name"], *found["password"], *found["ok"], *found["cancel"]]
    for control in controls:
        assert control.bounds is not None and client.contains(control.bounds), control
        assert control.window_title == FORM_TITLE
    # The form's box fills the client area exactly, so the tree's coordinates are X's coordinates.
    box = [node for node in nodes if node.parent == frame.ref]
    assert [node.bounds for node in box] == [client]
    first_ok, second_ok = sorted(found["ok"], key=lambda node: node.bounds.y if node.bounds else 0)
    assert first_ok.bounds is not None and second_ok.bounds is not None
    assert first_ok.bounds.y + first_ok.bounds.height <= second_ok.bounds.y
    assert first_ok.ref != second_ok.ref


async def test_nodes_carry_states_actions_editability_text_depth_and_pid(
    reader: AtspiReader, gtk_form: GtkForm
) -> None:
    reader_nodes = await reader.snapshot()
    found = form_nodes(reader_nodes)
    name, cancel, frame = found["name"][0], found["cancel"][0], found["frame"][0]
    assert {
        "enabled",
        "sensitive",
        "showing",
        "visible",
        "focusable",
        "editable",
        "single_line",
    } <= name.states
    assert name.editable and not name.secured and name.text == ""
    assert "click" in cancel.actions and not cancel.editable
    assert {"enabled", "showing", "focusable"} <= cancel.states
    assert "active" in frame.states
    application = next(node for node in reader_nodes if node.ref == frame.parent)
    assert application.role == "application" and application.depth == 0 and application.parent is None
    assert frame.depth == 1 and cancel.depth == 3
    assert {node.pid for node in (application, frame, name, cancel)} == {gtk_form.process.pid}


async def test_the_password_is_never_read_into_the_snapshot(reader: AtspiReader, form_secret: str) -> None:
    nodes = await reader.snapshot()
    (password,) = form_nodes(nodes)["password"]
    assert password.secured and password.text == ""
    for node in nodes:
        for value in dataclasses.astuple(node):
            assert form_secret not in repr(value), node
    # Nor its bullet mask: GTK would answer Text.GetText with one bullet per character.
    assert all("\u2022" not in node.text and "*" * 3 not in node.text for node in nodes)


async def test_do_action_on_cancel_clicks_it(reader: AtspiReader, gtk_form: GtkForm) -> None:
    (cancel,) = form_nodes(await reader.snapshot())["cancel"]
    assert await reader.do_action(cancel.ref) is True
    assert gtk_form.expect(lambda line: line.startswith("CLICKED")) == "CLICKED Cancel 3"


async def test_do_action_tells_the_two_ok_buttons_apart(reader: AtspiReader, gtk_form: GtkForm) -> None:
    oks = sorted(
        form_nodes(await reader.snapshot())["ok"], key=lambda node: node.bounds.y if node.bounds else 0
    )
    assert await reader.do_action(oks[1].ref, "click")
    assert gtk_form.expect(lambda line: line.startswith("CLICKED")) == "CLICKED OK 2"


async def test_set_text_on_the_name_entry_changes_the_form(reader: AtspiReader, gtk_form: GtkForm) -> None:
    (name,) = form_nodes(await reader.snapshot())["name"]
    assert await reader.set_text(name.ref, "Ada Lovelace")
    assert gtk_form.expect(lambda line: line.startswith("NAME") and line != "NAME ") == "NAME Ada Lovelace"
    (after,) = form_nodes(await reader.snapshot())["name"]
    assert after.text == "Ada Lovelace"


async def test_grab_focus_moves_the_keyboard_focus_to_the_named_field(reader: AtspiReader) -> None:
    (name,) = form_nodes(await reader.snapshot())["name"]
    assert await reader.grab_focus(name.ref)
    (focused,) = form_nodes(await reader.snapshot())["name"]
    assert "focused" in focused.states


async def test_an_unknown_ref_raises_an_accessibility_error_with_a_sentence(reader: AtspiReader) -> None:
    (cancel,) = form_nodes(await reader.snapshot())["cancel"]
    bus_name = cancel.ref.split("|")[0]
    gone = f"{bus_name}|/org/a11y/atspi/accessible/987654"
    with pytest.raises(AccessibilityError, match=r"^The accessible object .*987654 does not exist.*\.$"):
        await reader.do_action(gone)
    with pytest.raises(AccessibilityError, match=r"does not exist"):
        await reader.grab_focus(":1.9999|/org/a11y/atspi/accessible/1")
    with pytest.raises(AccessibilityError, match=r"is not an accessibility ref"):
        await reader.set_text("not-a-ref", "x")
    with pytest.raises(AccessibilityError, match=r"does not support"):
        await reader.set_text(cancel.ref, "x")


async def test_watch_reports_a_relabel_and_an_added_button(reader: AtspiReader, gtk_form: GtkForm) -> None:
    events: list[tuple[str, str]] = []
    await reader.watch(lambda kind, ref: events.append((kind, ref)))
    (cancel,) = form_nodes(await reader.snapshot())["cancel"]
    gtk_form.send("relabel Cancel Abort")
    await wait_for_event(
        events, lambda kind, ref: kind == "object:property-change:accessible-name" and ref == cancel.ref
    )
    gtk_form.send("add Extra")
    await wait_for_event(
        events, lambda kind, ref: kind == "object:children-changed:add" and ref == cancel.parent
    )
    nodes = await reader.snapshot()
    assert [node.ref for node in only(nodes, "push button", "Abort")] == [cancel.ref]
    assert len(only(nodes, "push button", "Extra")) == 1


async def wait_for_event(events: list[tuple[str, str]], wanted: object, timeout_s: float = 5.0) -> None:
    assert callable(wanted)
    async with asyncio.timeout(timeout_s):
        while not any(wanted(kind, ref) for kind, ref in events):
            await asyncio.sleep(0.02)


async def test_the_walk_stays_within_max_objects_and_max_depth(reader: AtspiReader) -> None:
    capped = await reader.snapshot(max_objects=4)
    assert len(capped) == 4
    assert any("max_objects" in note for note in reader.notes)
    shallow = await reader.snapshot(max_depth=1)
    assert {node.depth for node in shallow} == {0, 1}
    assert any("max_depth" in note for note in reader.notes)
    full = await reader.snapshot()
    assert reader.notes == ()
    assert [node.ref for node in full[:4]] == [node.ref for node in capped]


def test_states_decode_in_at_spi_enum_order() -> None:
    # Bits from AtspiStateType: ACTIVE=1, FOCUSED=12, SHOWING=25, VISIBLE=30, READ_ONLY=43 (word 1, bit 11).
    assert decode_states([(1 << 1) | (1 << 12) | (1 << 25) | (1 << 30), 1 << 11]) == {
        "active", "focused", "showing", "visible", "read_only",
    }  # fmt: skip


async def test_a_hung_application_is_skipped_and_noted_without_hanging_the_walk(
    reader: AtspiReader, a11y_desktop: A11yDesktop, gtk_form: GtkForm
) -> None:
    with start_gtk_form(a11y_desktop, "second-form-secret") as second:
        async with asyncio.timeout(10):
            while len(only(await reader.snapshot(), "frame", FORM_TITLE)) < 2:
                await asyncio.sleep(0.1)
        os.kill(second.process.pid, signal.SIGSTOP)
        try:
            started = time.perf_counter()
            nodes = await reader.snapshot()
            elapsed_s = time.perf_counter() - started
        finally:
            os.kill(second.process.pid, signal.SIGCONT)
    assert elapsed_s < 2.0
    assert len(only(nodes, "frame", FORM_TITLE)) == 1
    assert {node.pid for node in nodes} == {gtk_form.process.pid}
    assert len(reader.notes) == 1 and "did not answer within 0.5 s" in reader.notes[0]
