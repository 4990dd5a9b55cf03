"""Master keys kept in a 0600 file inside a 0700 directory: the fallback when nothing better exists."""

from __future__ import annotations

import base64
import binascii
import contextlib
import fcntl
import json
import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from kronii.crypto.errors import KeyFileError
from kronii.crypto.provider import MASTER_KEY_BYTES, LocalMasterKeyProvider

log = logging.getLogger(__name__)

KEY_FILE_NAME = "master.key"
_LOCK_FILE_NAME = ".master.key.lock"
_FORMAT = "kronii-master-keys/v1"


class KeyFileProvider(LocalMasterKeyProvider):
    """Versioned master keys in ``directory/master.key``.

    The directory is created 0700 if missing; an existing one must be owned by this user and not be
    accessible by group or others. The key file is written 0600 and refused when its mode lets group
    or others in, when it is not a regular file, or when another user owns it. Neither errors nor log
    lines name a filesystem path (kronii's services promise that): the file is `master.key` in the
    directory the caller chose (the data directory's keys).
    """

    def __init__(self, directory: Path) -> None:
        self._directory = Path(directory)
        self._path = self._directory / KEY_FILE_NAME
        self._prepare_directory()
        with self._locked():
            keys = self._read()
            if keys is None:
                keys = {1: os.urandom(MASTER_KEY_BYTES)}
                self._write(keys)
                log.info("kronii.crypto: created master key file")
        self._keys = keys

    @property
    def name(self) -> str:
        return "keyfile"

    @property
    def path(self) -> Path:
        """Where the key file is; for local logs only, never for a message that crosses an API."""
        return self._path

    @property
    def current_version(self) -> int:
        return max(self._keys)

    def rotate(self) -> int:
        with self._locked():
            keys = self._read() or dict(self._keys)
            version = max(keys) + 1
            keys[version] = os.urandom(MASTER_KEY_BYTES)
            self._write(keys)
        self._keys = keys
        log.info("kronii.crypto: master key file rotated to version %d", version)
        return version

    def _master_key(self, version: int) -> bytes | None:
        if version not in self._keys:
            # Another process may have rotated since this one loaded the file.
            with self._locked():
                keys = self._read()
            if keys is not None:
                self._keys = keys
        return self._keys.get(version)

    @contextlib.contextmanager
    def holding(self) -> Iterator[dict[int, bytes]]:
        """The file's keys, read under its lock, which stays held until the block ends (for a move
        that must not race a rotation)."""
        with self._locked():
            keys = self._read()
            if keys is None:
                raise KeyFileError("the master key file is gone")
            yield dict(keys)

    def remove(self) -> None:
        """Delete the key file (inside :meth:`holding`, once its keys are kept elsewhere)."""
        try:
            os.unlink(self._path)
            dir_fd = os.open(self._directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            log.error("kronii.crypto: cannot remove the master key file: %s", exc.strerror)
            raise KeyFileError("the master key file cannot be removed") from None

    # -- filesystem ---------------------------------------------------------------------------

    def _prepare_directory(self) -> None:
        try:
            self._directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = os.lstat(self._directory)
        except OSError as exc:
            log.error("kronii.crypto: cannot create master key directory: %s", exc.strerror)
            raise KeyFileError("the master key directory cannot be created or read") from None
        if not stat.S_ISDIR(st.st_mode):
            log.error("kronii.crypto: master key directory is not a directory")
            raise KeyFileError("the master key directory is not a directory")
        if st.st_uid != os.getuid():
            log.error("kronii.crypto: master key directory is owned by uid %d", st.st_uid)
            raise KeyFileError("the master key directory is owned by another user")
        mode = stat.S_IMODE(st.st_mode)
        if mode & 0o077:
            log.error(
                "kronii.crypto: master key directory has mode %04o; run chmod 700 on it",
                mode,
            )
            raise KeyFileError(
                f"the master key directory has mode {mode:04o}, open to group or others; it must be 0700"
            )

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        try:
            fd = os.open(self._directory / _LOCK_FILE_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except OSError as exc:
            log.error("kronii.crypto: cannot open lock file in the master key directory: %s", exc.strerror)
            raise KeyFileError("the master key lock file cannot be opened") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> dict[int, bytes] | None:
        try:
            fd = os.open(self._path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.error("kronii.crypto: cannot open master key file: %s", exc.strerror)
            raise KeyFileError("the master key file cannot be opened (is it a symbolic link?)") from None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                log.error("kronii.crypto: master key file is not a regular file")
                raise KeyFileError("the master key file is not a regular file")
            if st.st_uid != os.getuid():
                log.error("kronii.crypto: master key file is owned by uid %d", st.st_uid)
                raise KeyFileError("the master key file is owned by another user")
            mode = stat.S_IMODE(st.st_mode)
            if mode & 0o077:
                log.error(
                    "kronii.crypto: refusing master key file with mode %04o; run chmod 600 on it",
                    mode,
                )
                raise KeyFileError(
                    f"the master key file has mode {mode:04o}, readable beyond its owner; "
                    "it must be 0600 and is refused until it is"
                )
            raw = handle.read()
        return self._parse(raw)

    def _parse(self, raw: bytes) -> dict[int, bytes]:
        try:
            doc = json.loads(raw)
            if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
                raise ValueError("unknown format")
            versions = doc["versions"]
            if not isinstance(versions, dict) or not versions:
                raise ValueError("no versions")
            keys: dict[int, bytes] = {}
            for number, encoded in versions.items():
                version = int(number)
                key = base64.b64decode(encoded, validate=True)
                if version < 1 or len(key) != MASTER_KEY_BYTES:
                    raise ValueError("bad key entry")
                keys[version] = key
        except (ValueError, KeyError, TypeError, binascii.Error):
            log.error("kronii.crypto: master key file is corrupt")
            raise KeyFileError("the master key file is corrupt") from None
        return keys

    def _write(self, keys: dict[int, bytes]) -> None:
        doc = {
            "format": _FORMAT,
            "versions": {str(v): base64.b64encode(k).decode("ascii") for v, k in sorted(keys.items())},
        }
        tmp = self._directory / f".{KEY_FILE_NAME}.{os.getpid()}.tmp"
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "wb") as handle:
                os.fchmod(handle.fileno(), 0o600)
                handle.write(json.dumps(doc).encode("ascii"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self._path)
            dir_fd = os.open(self._directory, os.O_RDONLY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)
        except OSError as exc:
            log.error("kronii.crypto: cannot write master key file: %s", exc.strerror)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise KeyFileError("the master key file cannot be written") from None
