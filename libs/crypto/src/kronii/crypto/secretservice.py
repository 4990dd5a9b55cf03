"""Master keys kept in the desktop's Secret Service (gnome-keyring, KWallet) default collection.

kronii never opens a Secret Service prompt: a missing default collection (``ReadAlias("default")``
answers ``/``), a locked one, or any call that answers with a prompt object instead of a result means
the keyring cannot serve the key without a person, and :class:`SecretServiceNotReadyError` says why.
Every call has a deadline, so a Secret Service that does not answer cannot hang the caller either.
"""

from __future__ import annotations

import contextlib
import logging
import os
from typing import Any

from jeepney import DBusErrorResponse, Message  # type: ignore[import-untyped]
from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]
from kronii.crypto.errors import MasterKeyUnavailableError, SecretServiceNotReadyError
from kronii.crypto.provider import MASTER_KEY_BYTES, LocalMasterKeyProvider, StaticKeys
from secretstorage.defines import SS_PATH, SS_PREFIX
from secretstorage.dhcrypto import Session
from secretstorage.exceptions import SecretServiceNotAvailableException, SecretStorageException
from secretstorage.item import Item
from secretstorage.util import DBusAddressWrapper, format_secret, open_session

log = logging.getLogger(__name__)

_SCHEMA = "io.kronii.MasterKey"
DEFAULT_TIMEOUT_S = 5.0
_NO_PROMPT = "/"

NO_DEFAULT_KEYRING = "the Secret Service has no default keyring"
LOCKED_KEYRING = "the Secret Service's default keyring is locked"


class _TimedConnection:
    """A jeepney connection whose every call has a deadline (secretstorage passes none)."""

    def __init__(self, connection: Any, timeout_s: float) -> None:
        self._connection = connection
        self._timeout_s = timeout_s

    def send_and_get_reply(self, message: Message, *, timeout: float | None = None) -> Message:
        return self._connection.send_and_get_reply(
            message, timeout=self._timeout_s if timeout is None else timeout
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._connection, name)


class _Keyring:
    """The default collection of the Secret Service, used only in ways that need no prompt."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        if not os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
            raise SecretServiceNotReadyError(
                "there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set)", unreachable=True
            )
        try:
            raw = open_dbus_connection(bus="SESSION", auth_timeout=timeout_s)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("kronii.crypto: cannot connect to the session bus: %s", exc)
            raise SecretServiceNotReadyError("the session bus does not answer", unreachable=True) from None
        self.connection = _TimedConnection(raw, timeout_s)
        self._session: Session | None = None
        try:
            self.path = self._default_collection()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.connection.close()

    def _call(self, address: DBusAddressWrapper, method: str, signature: str, *body: Any) -> Any:
        return guarded(self.timeout_s, lambda: address.call(method, signature, *body))

    def _default_collection(self) -> str:
        service = DBusAddressWrapper(SS_PATH, SS_PREFIX + "Service", self.connection)
        (path,) = self._call(service, "ReadAlias", "s", "default")
        if len(path) <= 1:
            raise SecretServiceNotReadyError(NO_DEFAULT_KEYRING)
        collection = DBusAddressWrapper(path, SS_PREFIX + "Collection", self.connection)
        if guarded(self.timeout_s, lambda: collection.get_property("Locked")):
            raise SecretServiceNotReadyError(LOCKED_KEYRING)
        return str(path)

    def session(self) -> Session:
        if self._session is None:
            self._session = guarded(self.timeout_s, lambda: open_session(self.connection))
        return self._session

    def search(self, attributes: dict[str, str]) -> list[tuple[dict[str, str], bytes]]:
        """The attributes and secret of every item of the default collection with ``attributes``."""
        collection = DBusAddressWrapper(self.path, SS_PREFIX + "Collection", self.connection)
        (paths,) = self._call(collection, "SearchItems", "a{ss}", attributes)
        found = []
        for path in paths:
            item = guarded(self.timeout_s, lambda p=path: Item(self.connection, p, self.session()))
            if guarded(self.timeout_s, item.is_locked):
                raise SecretServiceNotReadyError("a kronii master key in the Secret Service is locked")
            found.append(
                (guarded(self.timeout_s, item.get_attributes), guarded(self.timeout_s, item.get_secret))
            )
        return found

    def create(self, label: str, attributes: dict[str, str], secret: bytes) -> None:
        """A new item; refused (and its prompt dismissed, never shown) when the keyring wants a prompt."""
        collection = DBusAddressWrapper(self.path, SS_PREFIX + "Collection", self.connection)
        properties = {
            SS_PREFIX + "Item.Label": ("s", label),
            SS_PREFIX + "Item.Attributes": ("a{ss}", attributes),
        }
        wrapped = format_secret(self.session(), secret, "application/octet-stream")
        item, prompt = self._call(collection, "CreateItem", "a{sv}(oayays)b", properties, wrapped, False)
        if len(item) > 1:
            return
        self.dismiss(prompt)
        raise SecretServiceNotReadyError("the Secret Service asked for a prompt to store the master key")

    def dismiss(self, prompt: str) -> None:
        """Dismiss a prompt object kronii will not show (Prompt is never called)."""
        if prompt and prompt != _NO_PROMPT:
            address = DBusAddressWrapper(prompt, SS_PREFIX + "Prompt", self.connection)
            with contextlib.suppress(Exception):
                self._call(address, "Dismiss", "")


def guarded(timeout_s: float, call: Any) -> Any:
    """Run one Secret Service call; a timeout or a missing service becomes SecretServiceNotReadyError."""
    try:
        return call()
    except TimeoutError:
        raise SecretServiceNotReadyError(
            f"the Secret Service did not answer within {timeout_s:g} s", unreachable=True
        ) from None
    except SecretServiceNotAvailableException as exc:
        log.warning("kronii.crypto: Secret Service not available: %s", exc)
        raise SecretServiceNotReadyError(
            "no Secret Service answers on the session bus", unreachable=True
        ) from None
    except DBusErrorResponse as exc:
        if exc.name == "org.freedesktop.Secret.Error.IsLocked":
            raise SecretServiceNotReadyError(LOCKED_KEYRING) from None
        log.warning("kronii.crypto: Secret Service error: %s", exc.name)
        raise SecretServiceNotReadyError(f"the Secret Service refused with {exc.name}") from None
    except (ConnectionError, OSError) as exc:
        log.warning("kronii.crypto: Secret Service connection failed: %s", exc)
        raise SecretServiceNotReadyError("the session bus connection failed", unreachable=True) from None


class SecretServiceProvider(LocalMasterKeyProvider):
    """One Secret Service item per master key version, found by its attributes.

    Only an unlocked default collection is used, and nothing here ever prompts: otherwise
    :class:`SecretServiceNotReadyError` (a :class:`MasterKeyUnavailableError`) says why. Items carrying
    an ``origin`` attribute are keys another store had (a key file's, moved by `kronii keys
    migrate`): they only unwrap, under their origin's name (:meth:`adopted`). ``create`` False makes
    no first key when the keyring has none (the provider then has no current version to wrap with).
    """

    def __init__(
        self, *, application: str = "kronii", timeout_s: float = DEFAULT_TIMEOUT_S, create: bool = True
    ) -> None:
        self._application = application
        self._keyring = _Keyring(timeout_s)
        try:
            self._keys, self._adopted = self._load()
            if not self._keys and create:
                self._store(1, os.urandom(MASTER_KEY_BYTES))
                self._keys, self._adopted = self._load()
                if not self._keys:
                    raise MasterKeyUnavailableError("the Secret Service did not keep the master key")
        except BaseException:
            self.close()
            raise

    @classmethod
    def probe(cls, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> str | None:
        """None when the Secret Service answers with an unlocked default collection, without any
        prompt, within ``timeout_s`` per call; else the reason it cannot serve the key."""
        try:
            keyring = _Keyring(timeout_s)
        except SecretServiceNotReadyError as error:
            return error.reason
        except (SecretStorageException, MasterKeyUnavailableError) as error:
            log.warning("kronii.crypto: Secret Service probe: %s", error)
            return "the Secret Service answered with an error"
        keyring.close()
        return None

    @classmethod
    def available(cls, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> bool:
        """True when a Secret Service answers on the session bus with an unlocked default collection."""
        return cls.probe(timeout_s=timeout_s) is None

    @property
    def name(self) -> str:
        return "secret-service"

    @property
    def has_keys(self) -> bool:
        """Whether the keyring holds a key of its own (``create`` False may leave it with none)."""
        return bool(self._keys)

    @property
    def current_version(self) -> int:
        if not self._keys:
            raise MasterKeyUnavailableError("the Secret Service holds no kronii master key yet")
        return max(self._keys)

    def adopted(self) -> list[StaticKeys]:
        """The keys other stores had, one unwrap-only provider per origin."""
        return [StaticKeys(origin, keys) for origin, keys in sorted(self._adopted.items())]

    def adopt(self, origin: str, keys: dict[int, bytes]) -> None:
        """Keep ``keys`` (another store's, under its name ``origin``) in the keyring; each is read back
        and compared. Keys already kept are not stored twice."""
        held = self._adopted.get(origin, [])
        for version, key in sorted(keys.items()):
            if (version, key) not in held:
                self._store(version, key, origin=origin)
        self._keys, self._adopted = self._load()
        missing = [v for v, k in keys.items() if (v, k) not in self._adopted.get(origin, [])]
        if missing:
            raise MasterKeyUnavailableError(
                f"the Secret Service did not keep the {origin} master key versions {sorted(missing)}"
            )

    def rotate(self) -> int:
        fresh, _ = self._load()
        version = max(max(fresh, default=0), max(self._keys, default=0)) + 1
        self._store(version, os.urandom(MASTER_KEY_BYTES))
        self._keys, self._adopted = self._load()
        if version not in self._keys:
            raise MasterKeyUnavailableError("the Secret Service did not keep the new master key")
        log.info("kronii.crypto: Secret Service master key rotated to version %d", version)
        return version

    def close(self) -> None:
        self._keyring.close()

    def _master_key(self, version: int) -> bytes | None:
        if version not in self._keys:
            self._keys = self._load()[0] or self._keys
        return self._keys.get(version)

    def _attributes(self) -> dict[str, str]:
        return {"xdg:schema": _SCHEMA, "application": self._application}

    def _load(self) -> tuple[dict[int, bytes], dict[str, list[tuple[int, bytes]]]]:
        keys: dict[int, bytes] = {}
        adopted: dict[str, list[tuple[int, bytes]]] = {}
        try:
            found = self._keyring.search(self._attributes())
        except SecretStorageException as exc:
            log.error("kronii.crypto: Secret Service read failed: %s", exc)
            raise MasterKeyUnavailableError("the Secret Service master keys cannot be read") from None
        for attributes, secret in found:
            try:
                version = int(attributes.get("version", ""))
            except ValueError:
                continue
            if version < 1 or len(secret) != MASTER_KEY_BYTES:
                log.error("kronii.crypto: Secret Service master key version %d is malformed", version)
                raise MasterKeyUnavailableError("a Secret Service master key item is malformed")
            origin = attributes.get("origin", "")
            if origin and origin != self.name:
                if (version, bytes(secret)) not in adopted.setdefault(origin, []):
                    adopted[origin].append((version, bytes(secret)))
                continue
            if version in keys and keys[version] != secret:
                log.error("kronii.crypto: Secret Service holds two master keys for version %d", version)
                raise MasterKeyUnavailableError(
                    "the Secret Service holds two different master keys for one version"
                )
            keys[version] = bytes(secret)
        return keys, adopted

    def _store(self, version: int, key: bytes, *, origin: str = "") -> None:
        attributes = {**self._attributes(), "version": str(version)}
        label = f"{self._application} master key v{version}"
        if origin:
            # Two key files may both have had a version 1: the key's fingerprint keeps their items apart.
            attributes |= {"origin": origin, "fingerprint": _fingerprint(key)}
            label = f"{self._application} master key v{version} (from the {origin})"
        try:
            self._keyring.create(label, attributes, key)
        except SecretStorageException as exc:
            log.error("kronii.crypto: Secret Service write failed: %s", exc)
            raise MasterKeyUnavailableError("the Secret Service did not store the master key") from None


def _fingerprint(key: bytes) -> str:
    import hashlib

    return hashlib.sha256(b"kronii.crypto/fingerprint/v1|" + key).hexdigest()[:16]
