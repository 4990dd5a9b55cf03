"""A prompt window is told from an app by what it is (WM_CLASS, its program, its window type), and
its focus is not a context switch: the app the person was in stays the focus."""

from __future__ import annotations

from dataclasses import replace

import pytest
from kronii.desktop.prompt_windows import PROMPTERS, prompter_for_app
from kronii.sensor.core.machine import SensorCore
from kronii.sensor.core.model import Focus, FocusChanged, FocusObserved, PromptChanged, PulseEmitted
from kronii.sensor.core.params import SensorParams
from kronii.sensor.core.prompts import DIALOG_TYPE, WindowFacts, prompt_kind

NORMAL = "_NET_WM_WINDOW_TYPE_NORMAL"

# instance, class, program, window types -> the kind of prompt ("" for an app window)
ROWS = [
    ("gcr-prompter", "Gcr-prompter", "gcr-prompter", (DIALOG_TYPE,), "keyring"),
    ("gcr-prompter", "Gcr-prompter", "", (NORMAL,), "keyring"),
    ("", "", "gnome-keyring-prompt", (), "keyring"),
    (
        "polkit-gnome-authentication-agent-1",
        "Polkit-gnome-authentication-agent-1",
        "",
        (DIALOG_TYPE,),
        "polkit",
    ),
    ("", "", "polkit-kde-authentication-agent-1", (NORMAL,), "polkit"),
    ("pinentry-gnome3", "Pinentry-gnome3", "pinentry-gnome3", (DIALOG_TYPE,), "pinentry"),
    ("pinentry", "Pinentry", "pinentry-qt", (NORMAL,), "pinentry"),
    ("ssh-askpass", "Ssh-askpass", "ssh-askpass", (NORMAL,), "ssh-askpass"),
    ("", "", "ksshaskpass", (DIALOG_TYPE,), "ssh-askpass"),
    ("zenity", "Zenity", "zenity", (DIALOG_TYPE,), "dialog"),
    ("yad", "Yad", "yad", (DIALOG_TYPE,), "dialog"),
    # A general dialog tool counts only as a dialog: a zenity --text-info viewer window is not a prompt.
    ("zenity", "Zenity", "zenity", (NORMAL,), ""),
    ("kronii-confirm", "Zenity", "zenity", (DIALOG_TYPE,), "kronii"),
    ("", "", "kronii", (NORMAL,), "kronii"),
    # An app whose class merely starts with the word is an app (the tests' own KroniiEditor windows).
    ("kroniieditor", "KroniiEditor", "xterm", (NORMAL,), ""),
    # Apps, even in a dialog window of theirs, or with a prompt-like title, are apps.
    ("xterm", "XTerm", "xterm", (NORMAL,), ""),
    ("Navigator", "firefox", "firefox", (DIALOG_TYPE,), ""),
    ("code", "Code", "code", (DIALOG_TYPE,), ""),
    ("", "", "", (), ""),
]


@pytest.mark.parametrize(("instance", "klass", "program", "types", "kind"), ROWS)
def test_prompt_window_classification_table(
    instance: str, klass: str, program: str, types: tuple[str, ...], kind: str
) -> None:
    assert prompt_kind(WindowFacts(instance, klass, program, types)) == kind


def test_every_prompter_of_the_table_is_recognised_by_its_name_and_app_names_by_class_alone() -> None:
    for prompter in PROMPTERS:
        for name in prompter.names:
            assert prompt_kind(WindowFacts(program=name, window_types=(DIALOG_TYPE,))) == prompter.kind
            expected = "" if prompter.dialog_only else prompter.kind
            assert prompter_for_app(name.capitalize()) == expected
    assert prompter_for_app("Gcr-prompter") == "keyring"
    assert prompter_for_app("XTerm") == ""


EDITOR = Focus(
    app_name="Code", wm_class="code.Code", window_id=0x100, title="main.py", pid=10, app_start_time_ms=1
)
TERM = Focus(
    app_name="XTerm", wm_class="xterm.XTerm", window_id=0x200, title="bash", pid=20, app_start_time_ms=2
)
KEYRING = Focus(
    app_name="Gcr-prompter", wm_class="gcr-prompter.Gcr-prompter", window_id=0x300,
    title="Choose password for new keyring", pid=30, app_start_time_ms=3, prompt="keyring",
)  # fmt: skip


def _core() -> SensorCore:
    core = SensorCore(
        SensorParams(active_grace_secs=1, idle_threshold_secs=10, title_interval_secs=1), 1000.0
    )
    core.handle(FocusObserved(1000.0, EDITOR))
    return core


def test_a_prompt_taking_the_focus_is_no_focus_change_and_the_app_stays_the_focus() -> None:
    core = _core()
    effects = core.handle(FocusObserved(1001.0, KEYRING))
    assert effects == [PromptChanged(prompt=KEYRING, at=1001.0)]
    assert not any(isinstance(e, (FocusChanged, PulseEmitted)) for e in effects)
    assert core.focus == EDITOR and core.prompt == KEYRING
    # Its title changing is not a TitleChanged of the app either.
    assert core.handle(FocusObserved(1002.0, replace(KEYRING, title="Unlock the keyring"))) == []
    assert core.focus == EDITOR


def test_back_from_the_prompt_to_the_same_app_changes_nothing() -> None:
    core = _core()
    core.handle(FocusObserved(1001.0, KEYRING))
    effects = core.handle(FocusObserved(1002.0, EDITOR))
    assert effects == [PromptChanged(prompt=Focus(), at=1002.0)]
    assert core.prompt == Focus() and core.focus == EDITOR


def test_from_the_prompt_to_another_app_is_a_change_from_the_app_held() -> None:
    core = _core()
    core.handle(FocusObserved(1001.0, KEYRING))
    effects = core.handle(FocusObserved(1002.0, TERM))
    [changed] = [e for e in effects if isinstance(e, FocusChanged)]
    assert changed.previous == EDITOR and changed.current == TERM and changed.change == "app"
