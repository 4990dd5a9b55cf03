"""Remote viewing of the broker's display: x11vnc on loopback, behind a VNC password.

x11vnc listens on 127.0.0.1 only; a person reaches it through an SSH tunnel or from the
machine itself. The password is random, made on first start and kept in an rfbauth file (the VNC
DES-obfuscated format, which is obscured, not encrypted: the file is 0600 in a 0700 directory) under
the broker's data directory, and is never logged or put on a command line.

With `pipe_input` x11vnc injects nothing: it hands the viewers' input to the broker over a FIFO
(viewer_hands.py types it after stopping the agent); without, -multiptr gives each viewer its own
XInput2 master, so the watcher still sees a viewer's input as the person's, apart from the core XTEST
device other programs use.

x11vnc runs ``python -m kronii.broker.cli.viewer_hook attached|gone`` when an authenticated viewer
arrives or any client leaves; the hook tells the ViewerHookListener over its Unix socket. Blocking
calls throughout: the service calls start() and stop() from a thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
from cryptography.hazmat.primitives.ciphers import Cipher, modes
from kronii.broker.cli.viewer_hook import SOCKET_ENV

__all__ = ["VncError", "VncServer", "VncSettings", "decode_rfbauth", "encode_rfbauth"]

log = logging.getLogger(__name__)

# VNC's fixed DES key {23,82,107,6,35,78,88,7}, with each byte's bits reversed: VNC's d3des takes
# key bits in the opposite order to standard DES. Repeated three times: 3DES with one key is DES.
_VNC_KEY = bytes.fromhex("e84ad660c4721ae0") * 3
_PASSWORD_LENGTH = 8  # VNC authentication uses the first 8 characters and ignores the rest
_ALPHABET = "abcdefghijkmnopqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/l/I
_PORT_LINE = re.compile(r"PORT=(\d+)")
_STOP_GRACE_S = 3.0


class VncError(RuntimeError):
    """x11vnc cannot run or did not come up; the message is a sentence for the person."""


@dataclass(frozen=True)
class VncSettings:
    """``port`` 0: x11vnc takes the first free port from 5900 up (VncServer.port says which). ``viewonly``: viewers only watch."""

    port: int = 0
    viewonly: bool = False
    # The broker's FIFO for the viewers' input (adapters/viewer_hands.py): x11vnc then injects none itself.
    pipe_input: Path | None = None
    startup_timeout_s: float = 10.0


def _des(data: bytes, *, encrypt: bool) -> bytes:
    # The rfbauth format is one DES block under a published key: obfuscation, not secrecy.
    cipher = Cipher(TripleDES(_VNC_KEY), modes.ECB())  # noqa: S305
    worker = cipher.encryptor() if encrypt else cipher.decryptor()
    return worker.update(data) + worker.finalize()


def encode_rfbauth(password: str) -> bytes:
    """The 8 bytes of an rfbauth file for `password` (what `x11vnc -storepasswd` writes)."""
    raw = password.encode("latin-1")[:_PASSWORD_LENGTH]
    return _des(raw.ljust(_PASSWORD_LENGTH, b"\0"), encrypt=True)


def decode_rfbauth(data: bytes) -> str:
    """The password in an rfbauth file's contents."""
    if len(data) < _PASSWORD_LENGTH:
        raise VncError("the VNC password file is damaged; delete it to get a new password")
    return _des(data[:_PASSWORD_LENGTH], encrypt=False).rstrip(b"\0").decode("latin-1")


def _private_dir(path: Path) -> Path:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise VncError("the VNC directory is not a directory owned by this user")
    if stat.S_IMODE(info.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def _write_private(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + ".new")
    with contextlib.suppress(FileNotFoundError):
        partial.unlink()
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


def _hook_command(event: str) -> str:
    # x11vnc runs hooks through system(3), i.e. /bin/sh -c: every word is quoted.
    return shlex.join([sys.executable, "-m", "kronii.broker.cli.viewer_hook", event])


class VncServer:
    """x11vnc for one display, with the viewer hooks pointed at ``hook_socket``."""

    def __init__(
        self,
        display: str,
        data_dir: Path,
        hook_socket: Path,
        settings: VncSettings | None = None,
        *,
        executable: str = "x11vnc",
    ) -> None:
        self._display = display
        self._dir = Path(data_dir) / "vnc"
        self._hook_socket = Path(hook_socket)
        self._settings = settings or VncSettings()
        self._executable = executable
        self._process: subprocess.Popen[bytes] | None = None
        self._port = 0

    @property
    def directory(self) -> Path:
        """Where its password, port flag and log are: one per data dir (it names the x11vnc's -flag)."""
        return self._dir

    @property
    def pid(self) -> int:
        """x11vnc's pid while it runs, else 0."""
        return self._process.pid if self._process is not None and self.running else 0

    @property
    def password_file(self) -> Path:
        return self._dir / "passwd"

    @property
    def port(self) -> int:
        """The port viewers connect to on 127.0.0.1; 0 while x11vnc is not running."""
        return self._port if self.running else 0

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def password(self) -> str:
        """The VNC password, made on first use; for the person to read, never for a log."""
        _private_dir(self._dir)
        path = self.password_file
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            _write_private(path, encode_rfbauth(self._new_password()))
            info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise VncError("the VNC password file is not a file owned by this user")
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.chmod(path, 0o600)
        return decode_rfbauth(path.read_bytes())

    @staticmethod
    def _new_password() -> str:
        return "".join(secrets.choice(_ALPHABET) for _ in range(_PASSWORD_LENGTH))

    def command(self) -> list[str]:
        """x11vnc's argument list (no secret in it: the password is in the rfbauth file)."""
        args = [
            self._executable,
            "-display", self._display,
            "-localhost",
            "-noipv6",  # IPv4 loopback only: one address to reason about
            "-rfbauth", str(self.password_file),
            "-forever", "-shared",
            *self._input_options(),
            "-norc",  # a person's ~/.x11vncrc must not loosen any of this
            "-noremote",  # no X client on the display may change x11vnc's settings (hooks included)
            "-afteraccept", _hook_command("attached"),
            "-gone", _hook_command("gone"),
            "-nolookup",
            "-flag", str(self._dir / "port"),
            "-o", str(self._dir / "x11vnc.log"),
        ]  # fmt: skip
        # Without either option libvncserver probes ports itself, IPv6 included, for seconds.
        port_option = ["-rfbport", str(self._settings.port)] if self._settings.port else ["-autoport", "5900"]
        args += port_option
        if self._settings.viewonly:
            args.append("-viewonly")
        return args

    def _input_options(self) -> list[str]:
        fifo = self._settings.pipe_input
        if fifo is None:
            # Each viewer gets its own XInput2 master ("x11vnc <host> pointer/keyboard"): its input is
            # told apart from the core XTEST device that xdotool and every plain XTEST client share.
            return ["-multiptr", "-allowedcmds", "afteraccept,gone"]
        # The viewers' input goes to the broker, which types it after stopping the agent.
        pipe = f"reopen:cat > {shlex.quote(str(fifo))}"
        return ["-pipeinput", pipe, "-allowedcmds", "afteraccept,gone,pipeinput"]

    def start(self) -> int:
        """Start x11vnc (if it is not running) and return the port it listens on."""
        if self.running:
            return self._port
        if shutil.which(self._executable) is None:
            raise VncError("x11vnc is not installed; install it (Debian: apt-get install x11vnc)")
        self.password()
        flag = self._dir / "port"
        with contextlib.suppress(FileNotFoundError):
            flag.unlink()
        env = dict(os.environ)
        env[SOCKET_ENV] = str(self._hook_socket)
        self._process = subprocess.Popen(
            self.command(),
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: stop() kills x11vnc and any hook in flight
        )
        try:
            self._port = self._wait_for_port(flag)
        except BaseException:
            self.stop()
            raise
        log.info("remote viewing: x11vnc on 127.0.0.1:%d for display %s", self._port, self._display)
        return self._port

    def _wait_for_port(self, flag: Path) -> int:
        assert self._process is not None
        deadline = time.monotonic() + self._settings.startup_timeout_s
        while time.monotonic() < deadline:
            with contextlib.suppress(FileNotFoundError):
                found = _PORT_LINE.search(flag.read_text())
                if found:
                    return int(found.group(1))
            code = self._process.poll()
            if code is not None:
                raise VncError(f"x11vnc exited ({code}) before listening: {self._log_tail()}")
            time.sleep(0.05)
        raise VncError(
            f"x11vnc did not listen within {self._settings.startup_timeout_s}s: {self._log_tail()}"
        )

    def _log_tail(self) -> str:
        try:
            lines = (self._dir / "x11vnc.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            return "no log"
        return " | ".join(line.strip() for line in lines[-3:]) or "no log"

    def stop(self) -> None:
        """Stop x11vnc and everything in its process group; leaves no process behind.

        x11vnc may die before its "gone" hooks reach the broker: the caller clears the listener's
        viewers (ViewerHookListener.clear) after stopping."""
        process, self._process = self._process, None
        self._port = 0
        if process is None:
            return
        group = process.pid  # start_new_session: the group id is x11vnc's pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGTERM)
        try:
            process.wait(timeout=_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(group, signal.SIGKILL)
            process.wait(timeout=_STOP_GRACE_S)
        # A hook x11vnc started may outlive it in the group.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
