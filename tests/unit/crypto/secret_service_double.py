"""A scripted Secret Service (org.freedesktop.secrets) on a real private dbus-daemon, for the unit tests of
the master key store choice: each test sets what the keyring answers (no default collection, a locked
one, a prompt object for CreateItem, no answer at all) and reads back every method that was called, so
"Prompt was never called" is something a test can check. The D-Bus messages are real (jeepney on both
sides); only the keyring behind them is a script.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from jeepney import HeaderFields, MessageType, new_error, new_method_return  # type: ignore[import-untyped]
from jeepney.bus_messages import message_bus  # type: ignore[import-untyped]
from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

from tests.desktop import start_session_bus

BUS_NAME = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
COLLECTION_PATH = "/org/freedesktop/secrets/collection/login"
PROMPT_PATH = "/org/freedesktop/secrets/prompt/p1"
SESSION_PATH = "/org/freedesktop/secrets/session/s1"
_SS = "org.freedesktop.Secret."


@dataclass
class Script:
    """What the keyring answers."""

    default_collection: bool = True
    locked: bool = False
    create_item_prompts: bool = (
        False  # CreateItem answers ("/", a prompt path), as a keyring wanting a person
    )
    silent: set[str] = field(default_factory=set)  # methods never answered (a hung service)
    items: dict[str, tuple[dict[str, str], bytes]] = field(default_factory=dict)


@dataclass
class SecretServiceDouble:
    address: str
    script: Script
    calls: list[str] = field(default_factory=list)

    def called(self, member: str) -> bool:
        return member in self.calls


class _Server:
    def __init__(self, double: SecretServiceDouble) -> None:
        self.double = double
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.connection: Any = None

    def run(self) -> None:
        self.connection = open_dbus_connection(bus=self.double.address)
        self.connection.send_and_get_reply(message_bus.RequestName(BUS_NAME), timeout=5)
        self.ready.set()
        while not self.stop.is_set():
            try:
                message = self.connection.receive(timeout=0.05)
            except TimeoutError:
                continue
            if message.header.message_type == MessageType.method_call:
                self.answer(message)
        self.connection.close()

    def answer(self, message: Any) -> None:
        member = message.header.fields[HeaderFields.member]
        interface = message.header.fields.get(HeaderFields.interface, "")
        path = message.header.fields[HeaderFields.path]
        name = message.body[1] if member in ("Get", "Set") else member
        self.double.calls.append(name)
        if name in self.double.script.silent:
            return
        try:
            signature, body = self.reply(interface, path, member, message.body)
        except _Refused as refused:
            self.connection.send_message(new_error(message, refused.name, "s", (refused.text,)))
            return
        self.connection.send_message(new_method_return(message, signature, body))

    def reply(
        self, interface: str, path: str, member: str, body: tuple[Any, ...]
    ) -> tuple[str, tuple[Any, ...]]:
        script = self.double.script
        if member == "Get":
            return "v", (self.prop(path, body[1]),)
        if member == "ReadAlias":
            return "o", (COLLECTION_PATH if script.default_collection else "/",)
        if member == "OpenSession":
            if body[0] != "plain":
                raise _Refused("org.freedesktop.DBus.Error.NotSupported", "plain only")
            return "vo", (("s", ""), SESSION_PATH)
        if member == "SearchItems":
            wanted = body[0].items()
            found = [p for p, (attrs, _) in script.items.items() if all(attrs.get(k) == v for k, v in wanted)]
            return "ao", (found,)
        if member == "CreateItem":
            if script.create_item_prompts:
                return "oo", ("/", PROMPT_PATH)
            item = f"{COLLECTION_PATH}/{len(script.items) + 1}"
            attrs = dict(body[0][_SS + "Item.Attributes"][1])
            script.items[item] = (attrs, bytes(body[1][2]))
            return "oo", (item, "/")
        if member == "GetSecret":
            return "(oayays)", ((SESSION_PATH, b"", script.items[path][1], "application/octet-stream"),)
        if member in ("Prompt", "Dismiss"):
            return "", ()
        raise _Refused("org.freedesktop.DBus.Error.UnknownMethod", f"{interface}.{member}")

    def prop(self, path: str, name: str) -> tuple[str, Any]:
        script = self.double.script
        if name == "Locked":
            return "b", script.locked
        if name == "Label":
            return "s", "login"
        if name == "Attributes" and path in script.items:
            return "a{ss}", script.items[path][0]
        raise _Refused("org.freedesktop.DBus.Error.UnknownProperty", name)


class _Refused(Exception):
    def __init__(self, name: str, text: str) -> None:
        super().__init__(text)
        self.name, self.text = name, text


@contextlib.contextmanager
def secret_service_double(script: Script) -> Iterator[SecretServiceDouble]:
    """A private session bus with the scripted keyring owning org.freedesktop.secrets."""
    with start_session_bus() as address:
        double = SecretServiceDouble(address, script)
        server = _Server(double)
        thread = threading.Thread(target=server.run, name="secret-service-double", daemon=True)
        thread.start()
        if not server.ready.wait(10):
            raise RuntimeError("the Secret Service double did not take its bus name")
        try:
            yield double
        finally:
            server.stop.set()
            thread.join(5)
