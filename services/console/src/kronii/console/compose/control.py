"""The Control page's use cases, made once at start: the input broker over the console's service
clients (a grant through its local socket), the vision engine over them and (for an approval) through
its local socket."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kronii.console.adapters.broker_api import BrokerApi
from kronii.console.adapters.vision_api import SOCKET_NAME, VisionApi
from kronii.console.deps import ConsoleDeps
from kronii.console.usecases.show_control import ShowControl
from kronii.console.usecases.steer_control import SteerControl
from kronii.runtime.rendezvous import broker_socket_path, local_socket_path

__all__ = ["ControlState", "build"]


@dataclass(frozen=True)
class ControlState:
    show: ShowControl
    steer: SteerControl


async def build(deps: ConsoleDeps) -> ControlState:
    data_dir = Path(deps.settings.data_dir)
    broker = BrokerApi(deps.services, broker_socket_path(data_dir))
    vision = VisionApi(deps.services, local_socket_path(SOCKET_NAME, data_dir))
    return ControlState(ShowControl(broker, vision, deps.clock), SteerControl(broker, vision, deps.record))
