"""Whether a person is attached to the desktop, and which signal says so.

Pure: the adapters count viewers and devices, this module only decides. The reason is the
``interactive_reason`` of the control state ("" when the session is not interactive).

"unknown" is not a guess either way: the broker cannot see its viewers (its x11vnc could not start,
its port is held by another program, its hook socket is not receiving, or a viewer was attached when
the broker before this one ended). The session then counts as interactive, so no agent takes it
without the person's grant (fail closed), and the control table refuses an agent's acquire saying why.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "DEVICES",
    "FLAG",
    "NOT_INTERACTIVE",
    "UNKNOWN",
    "VIEWER",
    "InteractiveReason",
    "interactive_reason",
    "reconnect_wait_s",
]

InteractiveReason = Literal["flag", "viewer", "devices", "unknown", ""]
FLAG: Final = "flag"
VIEWER: Final = "viewer"
DEVICES: Final = "devices"
UNKNOWN: Final = "unknown"
NOT_INTERACTIVE: Final = ""


def interactive_reason(
    flag: bool,
    viewers: int,
    physical_devices: int,
    viewer_authoritative: bool,
    viewers_known: bool = True,
) -> InteractiveReason:
    """Why the session is interactive, or "" when no person is attached.

    The first row that matches wins ("-": any value)::

        flag   viewers  physical_devices  viewer_authoritative  viewers_known   reason
        True   -        -                 -                     -               "flag"
        False  >= 1     -                 -                     -               "viewer"
        False  0        >= 1              False                 -               "devices"
        False  0        -                 -                     False           "unknown"
        False  0        >= 1              True                  True            ""
        False  0        0                 -                     True            ""

    The flag is the operator saying so and overrides everything. A viewer is a person watching
    through VNC, whatever the devices say. Physical devices are weaker evidence (a headless box can
    have a keyboard plugged in that nobody uses), so with ``viewer_authoritative`` only a viewer or
    the flag makes a session interactive. When the viewers cannot be seen (``viewers_known``
    false) and nothing else says a person is there, nobody can say that nobody is: "unknown".
    """
    if flag:
        return FLAG
    if viewers > 0:
        return VIEWER
    if physical_devices > 0 and not viewer_authoritative:
        return DEVICES
    if not viewers_known:
        return UNKNOWN
    return NOT_INTERACTIVE


def reconnect_wait_s(viewers: int | None, ended_s_ago: float | None, grace_s: float) -> float:
    """How long a broker that just started cannot tell whether a person watches, because viewers
    were attached to an x11vnc that is gone now (the one an earlier broker left, which this one had
    to stop, or the one that exited under them): the person's viewer was disconnected, and the
    person may be about to reconnect. A viewer attaching ends the wait at once.

    ``viewers``: how many were attached (None: not known, which counts as some); ``ended_s_ago``:
    how long ago they were disconnected (None: just now, or not known).
    """
    if viewers == 0:
        return 0.0
    if ended_s_ago is None:
        return grace_s
    return max(0.0, grace_s - ended_s_ago)
