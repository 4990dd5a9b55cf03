"""The automation compatibility audit's table (seed 004, "Automation Program Compatibility Audit"):
every automation tool kronii knows of, how it injects input, and how it is brought under the
broker. Pure: what is installed is found by `kronii.broker.cli.compat` and passed in.

The rule the table applies: no direct X injection in an interactive session; all automation routes
through the broker (a lease the person granted, input the person's own input revokes).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "ADAPTER_APPROACHES",
    "COLUMNS",
    "ENFORCEMENT_ON_WAYLAND",
    "ENFORCEMENT_ON_X11",
    "TOOLS",
    "ToolRow",
    "render_markdown",
]

COLUMNS = ("Tool", "Input Path", "Risk", "Compatibility", "Adapter Plan", "STOP_NOW", "SAFE_INTERRUPT")
BUILT_IN = "built in"

_NO_STOP = "Not honoured: it injects directly, so revoking the lease does not stop it"
_NO_PAUSE = "Not honoured: it has no safe points and never asks the broker"
_STEP_STOP = "Once ported: input is dropped and StepRunner raises Stopped with no further step run"
_STEP_PAUSE = "Once ported: StepRunner asks the safe point before each step and waits for a new grant"


@dataclass(frozen=True)
class ToolRow:
    """One tool. ``executables`` and ``python_modules`` are what the probe looks for (any one found
    means installed); a row with neither is part of kronii itself."""

    tool: str
    input_path: str
    risk: str
    compatibility: str
    adapter_plan: str
    stop_now: str
    safe_interrupt: str
    executables: tuple[str, ...] = ()
    python_modules: tuple[str, ...] = ()

    def cells(self) -> tuple[str, ...]:
        return (
            self.tool,
            self.input_path,
            self.risk,
            self.compatibility,
            self.adapter_plan,
            self.stop_now,
            self.safe_interrupt,
        )


TOOLS: tuple[ToolRow, ...] = (
    ToolRow(
        "kronii BrokerClient / StepRunner",
        "Broker HTTP API: POST /sessions/{id}/agent/input under a lease; the broker injects through its own XTEST device",
        "Low",
        "Compatible (the reference path)",
        "None needed: kronii.agents.broker_client and kronii.broker.cli.steps",
        "Lease revoked, queue cleared; the next input is dropped (stopped/user_control), StepRunner raises Stopped",
        "StepRunner asks POST …/agent/safe_point before each step; PAUSE waits for a new grant",
    ),
    ToolRow(
        "xdotool",
        "libxdo: XTEST (XTestFakeKeyEvent/ButtonEvent); XSendEvent with --window; windowactivate moves focus",
        "High: direct X injection and focus changes",
        "Compatible through PATH shadowing",
        "services/broker/shadow/xdotool first on PATH (kronii.broker.cli.xdotool_shim): key, type, click, mousemove, "
        "mousemove_relative go to the broker; get*/search run the real xdotool; window*/set_* and "
        "keydown/keyup/mousedown/mouseup are refused",
        'Lease revoked: the action in flight is cut at its next key event and the shadow exits 1 ("stopped the '
        'agent", how many actions were sent); nothing after it is sent',
        "Honoured: the shadow asks the safe point before every action and every 100-character piece of a "
        "`type`; at the next one it stops and exits 3 (the SAFE_INTERRUPT sentence), nothing after it sent",
        executables=("xdotool",),
    ),
    ToolRow(
        "xte (xautomation)",
        "XTEST, from a command line (`xte 'key Return' 'str text' 'mousemove x y' 'mouseclick 1'`)",
        "High: direct X injection",
        "Not compatible as installed",
        "CLI wrapper: an `xte` shadow translating key/str/mousemove/mouseclick commands to broker actions "
        "(keydown/keyup and mousedown/mouseup refused, as for xdotool)",
        _NO_STOP,
        _NO_PAUSE,
        executables=("xte",),
    ),
    ToolRow(
        "ydotool",
        "/dev/uinput through the ydotoold daemon: a virtual kernel input device, below X and any compositor",
        "Critical: invisible to X-level checks, and its events look like a person's device",
        "Not compatible",
        "Deny: agents get no access to /dev/uinput or the ydotoold socket; port callers to BrokerClient",
        _NO_STOP + " (and the broker would take its events for the person's)",
        _NO_PAUSE,
        executables=("ydotool", "ydotoold"),
    ),
    ToolRow(
        "wtype",
        "Wayland virtual-keyboard protocol (zwp_virtual_keyboard_v1) on a seat it picks (the last one the "
        "compositor lists); does nothing on an X11 desktop",
        "Medium: inert under X11; under Wayland direct injection, on the person's seat where it picks theirs",
        "Not compatible: the broker cannot refuse it (Wayland lets any client make a virtual keyboard); on "
        "the person's seat its keys look like the person's and take an agent's lease back",
        "CLI wrapper: a `wtype` shadow translating text, `-k key` and `-M mod` to broker type/key actions",
        _NO_STOP,
        _NO_PAUSE,
        executables=("wtype",),
    ),
    ToolRow(
        "dotool",
        "/dev/uinput (a virtual kernel input device), below the compositor, X11 and Wayland alike",
        "Critical: below every display server; its events look like a person's device",
        "Not compatible",
        "Deny: agents get no access to /dev/uinput; port callers (`type`, `key`, `mouseto`, `click`) to "
        "BrokerClient",
        _NO_STOP + " (and the broker would take its events for the person's)",
        _NO_PAUSE,
        executables=("dotool", "dotoold"),
    ),
    ToolRow(
        "xvkbd",
        "XTEST or XSendEvent (-text, -xsendevent); also an on-screen keyboard a person clicks",
        "High for `xvkbd -text` (direct injection); none as a person's on-screen keyboard",
        "Partly: the on-screen keyboard is the person's own input",
        "CLI wrapper for `xvkbd -text` (→ type, with \\r \\t escapes as key actions); leave the GUI to people",
        _NO_STOP,
        _NO_PAUSE,
        executables=("xvkbd",),
    ),
    ToolRow(
        "x11vnc",
        "VNC server: the broker's x11vnc hands its viewers' keys and pointer to the broker (-pipeinput),"
        " which stops the agent first and then types them on its own kronii-viewer master",
        "High when an agent drives a viewer; without -viewonly any viewer can type",
        "Compatible as the person's channel: a viewer makes the session interactive and its input is the user's",
        "No adapter for people; a viewer an agent uses must connect -viewonly (the audit flags a running "
        "x11vnc without -viewonly)",
        "Not applicable: its input is the person's and revokes agent leases",
        "Not applicable: the person's channel",
        executables=("x11vnc",),
    ),
    ToolRow(
        "AutoKey",
        "python-xlib (XRecord for hotkeys, XTEST/XSendEvent for phrases and scripts)",
        "High: scripts inject directly",
        "Partly: a phrase a person's hotkey expands is the person's action; scripted runs are not compatible",
        "Step-based runner: scripts that automate run as StepRunner steps calling BrokerClient instead of "
        "keyboard.send_keys/mouse.click_absolute",
        _STEP_STOP,
        _STEP_PAUSE,
        executables=("autokey-gtk", "autokey-qt", "autokey-shell"),
        python_modules=("autokey",),
    ),
    ToolRow(
        "SikuliX",
        "Java AWT Robot (XTEST) driven by screen image matching",
        "High: direct injection",
        "Not compatible as installed",
        "Step-based runner: each script action becomes a step; image matching stays, the Robot calls become "
        "broker input actions (or the script runs only with interactive=false)",
        _STEP_STOP,
        _STEP_PAUSE,
        executables=("sikulix", "sikulixide", "runsikulix"),
    ),
    ToolRow(
        "Actiona",
        "Qt macro player: XTEST",
        "High: direct injection",
        "Not compatible",
        "None practical (a GUI macro tool): allowed only while the broker reports interactive=false",
        _NO_STOP,
        _NO_PAUSE,
        executables=("actiona", "actexec"),
    ),
    ToolRow(
        "xmacro",
        "xmacrorec2 records with XRecord; xmacroplay replays with XTEST",
        "High: replay injects directly",
        "Not compatible as installed",
        "CLI wrapper: an `xmacroplay` shadow translating KeyStr/Button/Motion lines to broker actions (a "
        "press and its release become one key or click)",
        _NO_STOP,
        _NO_PAUSE,
        executables=("xmacroplay", "xmacrorec2", "xmacrorec"),
    ),
    ToolRow(
        "pyautogui",
        "On Linux, python-xlib XTEST (Xlib.ext.xtest.fake_input)",
        "High: direct injection",
        "Not compatible as installed",
        "Step-based runner: pyautogui.write/press/hotkey/click/moveTo/scroll become BrokerClient "
        "type_text/key/click/move/scroll inside StepRunner steps; screenshots stay",
        _STEP_STOP + " (today only its FAILSAFE corner stops it)",
        _STEP_PAUSE,
        python_modules=("pyautogui",),
    ),
    ToolRow(
        "pynput",
        "On X11, python-xlib XTEST; its uinput backend writes /dev/uinput",
        "High (Critical with the uinput backend)",
        "Not compatible as installed",
        "Step-based runner: keyboard.Controller/mouse.Controller calls become BrokerClient calls in steps; "
        "its listeners (reading input) are unaffected",
        _STEP_STOP,
        _STEP_PAUSE,
        python_modules=("pynput",),
    ),
    ToolRow(
        "python-xlib XTEST users",
        "Xlib.ext.xtest.fake_input called by any script",
        "High: direct injection",
        "Not compatible, except the broker itself (python-xlib is a kronii dependency: capture and the "
        "sensor read the display with it, the broker injects with it; its presence alone is expected)",
        "Step-based runner: fake_input calls become BrokerClient actions; only the broker keeps XTEST",
        _STEP_STOP,
        _STEP_PAUSE,
        python_modules=("Xlib.ext.xtest",),
    ),
    ToolRow(
        "keyboard (Python)",
        "Reads /dev/input and writes /dev/uinput (needs root)",
        "Critical: root, below X; its events look like a person's keyboard",
        "Not compatible",
        "Deny (no root, no uinput for agents); port callers to BrokerClient.key/type_text",
        _NO_STOP,
        _NO_PAUSE,
        python_modules=("keyboard",),
    ),
    ToolRow(
        "mouse (Python)",
        "Reads /dev/input and writes /dev/uinput (needs root)",
        "Critical: root, below X; its events look like a person's mouse",
        "Not compatible",
        "Deny (no root, no uinput for agents); port callers to BrokerClient.click/move/scroll",
        _NO_STOP,
        _NO_PAUSE,
        python_modules=("mouse",),
    ),
)

ENFORCEMENT_ON_X11 = """\
## What can and cannot be enforced on X11

- **Any X client can inject.** XTEST (and XSendEvent) are open to every client the X server accepts:
  the real xdotool called by its absolute path, pyautogui, a python-xlib script type straight into the
  X server. Nothing in X11 lets the broker refuse another program's input.
- **The broker sees and takes back; it cannot refuse.** It tells input apart by the device the X server
  says it came from (the `sourceid` of XI2 raw events): its own master `kronii-broker` is the agent;
  the core XTEST device ("Virtual core XTEST keyboard/pointer", shared by every plain XTEST client) is
  automation that went around the broker; everything else (the physical devices, and each VNC
  viewers' master `kronii-viewer`, on which the broker itself replays what x11vnc hands it) is the person. Unbrokered
  input while an agent holds a lease takes the lease back (row B1: the queue cleared, the agent told
  `unbrokered_input`), is journaled and audited as `broker.unbrokered_input` with the likely program
  (actor `unbrokered:xdotool (pid 812)`), and is shown to the person in a notice. It is never recorded
  as the person and starts no hold. What that program typed has reached the screen: the broker stops
  its own agent at once, it cannot take back another program's keys.
- **Naming the program is a best guess.** The X server does not say which client an XTEST event came
  from; the broker names a client that connected just then (the X-Resource extension's client pids,
  not the broker, not x11vnc, newest first) and its name from /proc. A program that connected and left
  before the broker looked is not found (actor `unbrokered`), one that connected at the same moment may
  be named instead, and a client on another machine has no pid.
- **A program that makes its own master device looks like a person.** XIChangeHierarchy is open to
  every client too: automation that creates its own master pair (as the broker
  does) and injects through it cannot be told from a viewer or a second keyboard: it takes the lease
  back as the person and is recorded as the person. So does everything below X (ydotool, the Python
  `keyboard` and `mouse` packages: /dev/uinput looks like a physical device).
- **Strict order for a viewer's key, not for every device.** x11vnc makes its own connection immune
  to server grabs (XTestGrabControl), so a viewer's key it typed itself could be processed in the
  middle of an agent's batch. The broker's x11vnc therefore types nothing: it hands each viewer event
  over (-pipeinput), and the broker closes the fence, waits until the agent's injector has stopped and
  its events are processed, and only then replays the event: no agent event of that lease comes after
  it. Other XTEST clients honour the injector's server grab, so their first event is seen before the
  agent's next batch. A physical keyboard's events are queued by the X server's input thread and can
  be processed during a grab: up to 7 agent events (one batch) can follow them.
- **The plain-XTEST fallback** (`KRONII_BROKER_INJECTION=xtest`) injects on the core XTEST device itself
  and can only tell its own events by time: inside its injection windows (and 100 ms after) every core
  XTEST event is taken for the agent's, so another program typing then is not seen; outside them it is
  unbrokered input as above.
- **Only the setup can keep agents off X**: an agent that is given no X display of its own (no
  DISPLAY or XAUTHORITY in its environment), no /dev/uinput, and the PATH shadows, reaches the desktop
  through the broker only.
- **Wayland is another matter**: there the compositor decides who may inject (virtual-keyboard
  protocols, libei), and nothing above applies.
"""

ADAPTER_APPROACHES = """\
## Adapter approaches

**CLI wrappers.** A command with the tool's name and arguments that turns each input it would inject into
a broker input action (`POST /sessions/{id}/agent/input`) and refuses what the broker cannot do safely
(focus changes, half key presses). The calling script is unchanged; the wrapper is invoked explicitly
(`kronii-xte …`) or installed under the tool's name.

**PATH shadowing.** The wrapper is installed under the tool's own name in a directory put first on the
agent's PATH, so unmodified scripts reach it. kronii ships one for xdotool (`services/broker/shadow/xdotool`,
`kronii.broker.cli.xdotool_shim`): input verbs go to the broker under the agent's lease (signing in with
KRONII_BROKER_CLIENT_ID and its Ed25519 key, the session token cached 0600 until it expires), read-only
verbs run the real xdotool found later on PATH, verbs that would move focus are refused. The chain runs
as steps (`kronii.broker.cli.xdotool_steps`): the broker's safe point before every action and every
100-character piece of a long `type`, the first one pinning the lease's epoch, so SAFE_INTERRUPT and
STOP_NOW end it at the next step with nothing more sent. Exit codes: 0 done, 1 dropped, stopped or
refused (the broker's sentence on stderr, with how many actions were sent), 2 usage, 3 paused at a safe
point (the person's SAFE_INTERRUPT: run it again after a new grant), 5 broker unreachable. A script that
calls a tool by absolute path bypasses the shadow: the audit cannot see that, the broker sees its input
as it comes (unbrokered input, above: the agent's lease is taken back), and the script must be fixed.

**Step-based runner with cancellation tokens.** For automation written in Python (or ported to it):
`kronii.broker.cli.steps.StepRunner` runs named steps, asking the broker's safe point before each one.
CONTINUE runs it; PAUSE waits, polling the state every 0.2 s, until the person grants the desktop again
or the token is cancelled; STOP cancels the token and raises `Stopped` with nothing more run. An input
dropped because the person took over (`user_control`, `stopped`, `stale_epoch`) cancels the token inside
the step. The lease is renewed at half its length while steps run. This and the xdotool shadow (which asks
the safe point itself) honour SAFE_INTERRUPT cleanly: other wrappers can only fail the next input.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _presence(row: ToolRow, installed: Collection[str], notes: Mapping[str, str]) -> str:
    if not row.executables and not row.python_modules:
        status = BUILT_IN
    else:
        status = "installed" if row.tool in installed else "not found"
    note = notes.get(row.tool, "")
    return f"{status} ({note})" if note else status


ENFORCEMENT_ON_WAYLAND = """\
## What can and cannot be enforced on Wayland (wlroots compositors; sway is where it is proven)

- **No client sees another's input.** The broker cannot watch devices as it does on X11. It uses what
  the compositor offers every client: seats and their idle notifications. The agent's virtual keyboard
  and pointer sit on the broker's own seat `kronii-agent` (sway makes it on request; elsewhere the
  compositor's configuration must declare it), and the idle notifications of the person's seats (20 ms)
  fire only for the person's input: the first key or movement after a pause takes the lease back.
- **At most one agent key after the person's.** There is no grab to order the two: the broker waits for
  the compositor after each event and reads its news of the person before the next, so only the event in
  flight at that instant can land after the person's (tested: none or one, over rounds).
- **Any client can make a virtual keyboard.** wtype, or any program speaking the protocol, types
  without the broker, and the broker cannot refuse it. On the person's seat its keys are taken for the
  person's (the lease is taken back, the safe direction); on the broker's seat they would be taken for
  the agent's: deny agents the Wayland socket, or run them where they cannot reach it.
- **Below the compositor.** ydotool and dotool write /dev/uinput: their devices join the person's seat
  and look like the person's keyboard. Deny agents /dev/uinput.
- **STOP_NOW** goes through `kronii control stop`, the broker's stop socket or its HTTP API; Wayland
  gives clients no global hotkey, so a compositor binding (sway: `bindsym $mod+Escape exec kronii control
  stop`) is the key.
"""


def render_markdown(
    rows: Sequence[ToolRow],
    installed: Collection[str],
    *,
    notes: Mapping[str, str] | None = None,
    findings: Sequence[str] = (),
    preface: str = "",
) -> str:
    """The audit document: ``preface``, the table (the seed's columns and whether each tool was
    found), ``findings`` (things to act on), what can and cannot be enforced on X11, and the adapter
    approaches."""
    notes = notes or {}
    header = ("Found", *COLUMNS)
    lines = ["# Automation program compatibility", ""]
    if preface:
        lines += [preface.rstrip(), ""]
    lines += [
        "Rule: no direct X injection in an interactive session; all automation routes through the input "
        "broker.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    for row in rows:
        cells = (_presence(row, installed, notes), *row.cells())
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    lines += ["", "## Findings", ""]
    lines += [f"- {finding}" for finding in findings] or ["- None."]
    lines += ["", ENFORCEMENT_ON_X11, ENFORCEMENT_ON_WAYLAND, ADAPTER_APPROACHES]
    return "\n".join(lines).rstrip() + "\n"
