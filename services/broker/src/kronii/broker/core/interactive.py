"""Whether a person is attached to the desktop, and which signal says so.

Pure: the adapters count viewers and devices, this module only decides. The reason is the
``interactive_reason`` of the control state ("" when the session is not interactive).
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["DEVICES", "FLAG", "NOT_INTERACTIVE", "VIEWER", "InteractiveReason", "interactive_reason"]

InteractiveReason = Literal["flag", "viewer", "devices", ""]
FLAG: Final = "flag"
VIEWER: Final = "viewer"
DEVICES: Final = "devices"
NOT_INTERACTIVE: Final = ""


def interactive_reason(
    flag: bool, viewers: int, physical_devices: int, viewer_authoritative: bool
) -> InteractiveReason:
    """Why the session is interactive, or "" when no person is attached.

    The first row that matches wins ("-": any value)::

        flag   viewers  physical_devices  viewer_authoritative   reason
        True   -        -                 -                      "flag"
        False  >= 1     -                 -                      "viewer"
        False  0        >= 1              False                  "devices"
        False  0        >= 1              True                   ""
        False  0        0                 -                      ""

    The flag is the operator saying so and overrides everything. A viewer is a person watching
    through VNC, whatever the devices say. Physical devices are weaker evidence (a headless box can
    have a keyboard plugged in that nobody uses), so with ``viewer_authoritative`` only a viewer or
    the flag makes a session interactive.
    """
    if flag:
        return FLAG
    if viewers > 0:
        return VIEWER
    if physical_devices > 0 and not viewer_authoritative:
        return DEVICES
    return NOT_INTERACTIVE
