"""Master keys kept in the desktop's Secret Service (gnome-keyring, KWallet) default collection."""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

import secretstorage
from kronii.crypto.errors import MasterKeyUnavailableError
from kronii.crypto.provider import MASTER_KEY_BYTES, LocalMasterKeyProvider
from secretstorage.exceptions import SecretServiceNotAvailableException, SecretStorageException

log = logging.getLogger(__name__)

_SCHEMA = "io.kronii.MasterKey"


class SecretServiceProvider(LocalMasterKeyProvider):
    """One Secret Service item per master key version, found by its attributes.

    A locked collection that the user does not unlock, or a missing service, raises
    :class:`MasterKeyUnavailableError`: nothing falls back silently.
    """

    def __init__(self, *, application: str = "kronii") -> None:
        self._application = application
        try:
            self._connection: Any = secretstorage.dbus_init()
        except (SecretStorageException, OSError) as exc:
            log.error("kronii.crypto: cannot connect to the Secret Service: %s", exc)
            raise MasterKeyUnavailableError("the Secret Service is not reachable") from None
        try:
            self._keys = self._load()
            if not self._keys:
                self._store(1)
                self._keys = self._load()
        except BaseException:
            self.close()
            raise
        if not self._keys:
            raise MasterKeyUnavailableError("the Secret Service did not keep the master key")

    @classmethod
    def available(cls) -> bool:
        """True when a Secret Service answers on the session bus and has a default collection."""
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            return False
        try:
            connection = secretstorage.dbus_init()
        except Exception:
            return False
        try:
            if not secretstorage.check_service_availability(connection):
                return False
            secretstorage.get_default_collection(connection)
            return True
        except Exception:
            return False
        finally:
            with contextlib.suppress(Exception):
                connection.close()

    @property
    def name(self) -> str:
        return "secret-service"

    @property
    def current_version(self) -> int:
        return max(self._keys)

    def rotate(self) -> int:
        version = max(max(self._load(), default=0), max(self._keys)) + 1
        self._store(version)
        self._keys = self._load()
        if version not in self._keys:
            raise MasterKeyUnavailableError("the Secret Service did not keep the new master key")
        log.info("kronii.crypto: Secret Service master key rotated to version %d", version)
        return version

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._connection.close()

    def _master_key(self, version: int) -> bytes | None:
        if version not in self._keys:
            self._keys = self._load() or self._keys
        return self._keys.get(version)

    def _attributes(self) -> dict[str, str]:
        return {"xdg:schema": _SCHEMA, "application": self._application}

    def _collection(self) -> secretstorage.Collection:
        try:
            collection = secretstorage.get_default_collection(self._connection)
            if collection.is_locked() and collection.unlock():
                raise MasterKeyUnavailableError("the Secret Service collection is locked")
        except SecretServiceNotAvailableException:
            raise MasterKeyUnavailableError("the Secret Service is not available") from None
        except SecretStorageException as exc:
            log.error("kronii.crypto: Secret Service default collection: %s", exc)
            raise MasterKeyUnavailableError(
                "the Secret Service default collection cannot be opened"
            ) from None
        return collection

    def _load(self) -> dict[int, bytes]:
        keys: dict[int, bytes] = {}
        try:
            for item in self._collection().search_items(self._attributes()):
                if item.is_locked() and item.unlock():
                    raise MasterKeyUnavailableError("a Secret Service master key item is locked")
                try:
                    version = int(item.get_attributes().get("version", ""))
                except ValueError:
                    continue
                secret = item.get_secret()
                if version < 1 or len(secret) != MASTER_KEY_BYTES:
                    log.error("kronii.crypto: Secret Service master key version %d is malformed", version)
                    raise MasterKeyUnavailableError("a Secret Service master key item is malformed")
                if version in keys and keys[version] != secret:
                    log.error("kronii.crypto: Secret Service holds two master keys for version %d", version)
                    raise MasterKeyUnavailableError(
                        "the Secret Service holds two different master keys for one version"
                    )
                keys[version] = bytes(secret)
        except SecretStorageException as exc:
            log.error("kronii.crypto: Secret Service read failed: %s", exc)
            raise MasterKeyUnavailableError("the Secret Service master keys cannot be read") from None
        return keys

    def _store(self, version: int) -> None:
        attributes = {**self._attributes(), "version": str(version)}
        try:
            self._collection().create_item(
                f"{self._application} master key v{version}",
                attributes,
                os.urandom(MASTER_KEY_BYTES),
                replace=False,
            )
        except SecretStorageException as exc:
            log.error("kronii.crypto: Secret Service write failed: %s", exc)
            raise MasterKeyUnavailableError("the Secret Service did not store the master key") from None
