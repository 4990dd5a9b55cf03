"""Master key in HashiCorp Vault's (or OpenBao's) transit engine: content keys are wrapped and unwrapped
by Vault.

The master key never leaves Vault. Errors from hvac are logged locally; the exceptions raised here are
sentences that name neither the Vault address nor the token: MasterKeyUnavailableError when Vault cannot
serve the key (down, sealed, wrong token, no such key), DecryptionError when Vault refuses a ciphertext.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
from typing import Any

import hvac  # type: ignore[import-untyped]
import hvac.exceptions  # type: ignore[import-untyped]
import requests
from kronii.crypto.errors import DecryptionError, MasterKeyUnavailableError, ProviderConfigError
from kronii.crypto.model import WrappedKey
from kronii.crypto.provider import CONTENT_KEY_BYTES, MasterKeyProvider

log = logging.getLogger(__name__)

_TRANSIT_PREFIX = re.compile(r"^vault:v([1-9][0-9]*):([A-Za-z0-9+/=]+)$")
DEFAULT_TIMEOUT_SECS = 10.0


def parse_transit_version(ciphertext: str) -> int:
    """The key version of a transit ciphertext ``vault:vN:<base64>``; DecryptionError when malformed."""
    match = _TRANSIT_PREFIX.match(ciphertext)
    if match is None:
        raise DecryptionError("the wrapped content key is not a Vault transit ciphertext")
    try:
        base64.b64decode(match.group(2), validate=True)
    except binascii.Error:
        raise DecryptionError("the wrapped content key is not a Vault transit ciphertext") from None
    return int(match.group(1))


def encode_transit_plaintext(key: bytes) -> str:
    """Transit takes plaintext as base64."""
    return base64.b64encode(key).decode("ascii")


def decode_transit_plaintext(plaintext: str) -> bytes:
    """The content key out of transit's base64 plaintext; DecryptionError unless it is 32 bytes."""
    try:
        key = base64.b64decode(plaintext, validate=True)
    except (binascii.Error, ValueError):
        raise DecryptionError("Vault returned a content key that is not valid base64") from None
    if len(key) != CONTENT_KEY_BYTES:
        raise DecryptionError("Vault returned a content key of the wrong length")
    return key


def wrapped_from_transit(provider: str, ciphertext: str) -> WrappedKey:
    return WrappedKey(
        provider=provider, key_version=parse_transit_version(ciphertext), blob=ciphertext.encode("ascii")
    )


def transit_from_wrapped(wrapped: WrappedKey) -> str:
    """The transit ciphertext of a wrapped key, checked against the version the key claims."""
    try:
        ciphertext = wrapped.blob.decode("ascii")
    except UnicodeDecodeError:
        raise DecryptionError("the wrapped content key is not a Vault transit ciphertext") from None
    if parse_transit_version(ciphertext) != wrapped.key_version:
        raise DecryptionError("the wrapped content key's version does not match its Vault ciphertext")
    return ciphertext


def _data(response: Any, field: str) -> Any:
    try:
        return response["data"][field]
    except (KeyError, TypeError):
        raise MasterKeyUnavailableError(f"Vault transit returned a response without {field!r}") from None


class _Refused(Exception):
    """Vault answered 400 to a ciphertext: it does not decrypt under this key (a DecryptionError)."""


def _unavailable(error: Exception, key_name: str, mount: str, timeout: float) -> Exception:
    """The sentence for an hvac or requests error; _Refused for a ciphertext Vault will not open."""
    missing = (
        f"Vault has no transit key {key_name!r} under the mount {mount!r}; create it or fix the key name"
    )
    if isinstance(error, hvac.exceptions.Forbidden | hvac.exceptions.Unauthorized):
        return MasterKeyUnavailableError(
            f"Vault refused the token for the transit key {key_name!r}; check the token and its policy"
        )
    if isinstance(error, hvac.exceptions.InvalidPath):
        return MasterKeyUnavailableError(missing)
    if isinstance(error, hvac.exceptions.InvalidRequest):
        # 400 is also Vault's answer to a ciphertext that does not open under the key.
        return MasterKeyUnavailableError(missing) if "key not found" in str(error) else _Refused()
    if isinstance(error, hvac.exceptions.VaultDown):
        return MasterKeyUnavailableError("Vault is sealed; unseal it before kronii can use its master key")
    if isinstance(error, requests.Timeout):
        return MasterKeyUnavailableError(f"Vault did not answer within {timeout:.0f} s")
    if isinstance(error, requests.RequestException):
        return MasterKeyUnavailableError(
            "Vault cannot be reached; check that it is running and that its address is right"
        )
    return MasterKeyUnavailableError(
        "Vault transit answered with an error; the log of this service has its answer"
    )


class VaultTransitProvider(MasterKeyProvider):
    """Wraps content keys with a Vault transit key (``encrypt``/``decrypt``/``rewrap``/``rotate``)."""

    def __init__(
        self,
        url: str,
        token: str,
        key_name: str,
        mount: str = "transit",
        *,
        timeout: float = DEFAULT_TIMEOUT_SECS,
    ) -> None:
        if not url or not token or not key_name:
            raise ProviderConfigError("Vault transit needs an address, a token and a key name")
        self._key_name = key_name
        self._mount = mount
        self._timeout = timeout
        self._client = hvac.Client(url=url, token=token, timeout=timeout)
        self._key_seen = False

    @property
    def name(self) -> str:
        return "vault-transit"

    @property
    def current_version(self) -> int:
        response = self._call("read_key", name=self._key_name)
        self._key_seen = True
        return int(_data(response, "latest_version"))

    def wrap(self, *, key: bytes) -> WrappedKey:
        if len(key) != CONTENT_KEY_BYTES:
            raise ValueError("a content key must be 32 bytes")
        if not self._key_seen:
            # Transit's encrypt creates a missing key on the fly: a mistyped key name would quietly
            # start a new master key that nothing else knows, so the key must exist first.
            _ = self.current_version
        response = self._call("encrypt_data", name=self._key_name, plaintext=encode_transit_plaintext(key))
        return wrapped_from_transit(self.name, str(_data(response, "ciphertext")))

    def unwrap(self, *, wrapped: WrappedKey) -> bytes:
        self._check_provider(wrapped)
        ciphertext = transit_from_wrapped(wrapped)
        try:
            response = self._call("decrypt_data", name=self._key_name, ciphertext=ciphertext)
        except _Refused:
            raise DecryptionError(
                f"Vault transit could not unwrap the content key under version {wrapped.key_version} "
                f"of the key {self._key_name!r}"
            ) from None
        return decode_transit_plaintext(str(_data(response, "plaintext")))

    def rewrap(self, *, wrapped: WrappedKey) -> WrappedKey:
        """Transit ``rewrap``: the content key is re-encrypted inside Vault and never seen here."""
        self._check_provider(wrapped)
        ciphertext = transit_from_wrapped(wrapped)
        try:
            response = self._call("rewrap_data", name=self._key_name, ciphertext=ciphertext)
        except _Refused:
            raise DecryptionError(
                f"Vault transit could not rewrap the content key under version {wrapped.key_version} "
                f"of the key {self._key_name!r}"
            ) from None
        return wrapped_from_transit(self.name, str(_data(response, "ciphertext")))

    def rotate(self) -> int:
        self._call("rotate_key", name=self._key_name)
        return self.current_version

    def _call(self, method: str, **kwargs: Any) -> Any:
        """Call transit; _Refused only from decrypt and rewrap (callers turn it into DecryptionError)."""
        try:
            return getattr(self._client.secrets.transit, method)(mount_point=self._mount, **kwargs)
        except (hvac.exceptions.VaultError, requests.RequestException) as exc:
            log.error("kronii.crypto: Vault transit %s on key %s failed: %s", method, self._key_name, exc)
            error = _unavailable(exc, self._key_name, self._mount, self._timeout)
            if isinstance(error, _Refused) and method not in ("decrypt_data", "rewrap_data"):
                error = MasterKeyUnavailableError(
                    "Vault transit refused the request; the log of this service has its answer"
                )
            raise error from None
