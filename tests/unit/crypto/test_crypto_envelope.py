"""seal / open_sealed / rewrap with a real key file master key."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from kronii.crypto import DecryptionError, KeyFileProvider, SealedObject, open_sealed, rewrap, seal

IMAGE = b"\x89PNG\r\n\x1a\n" + os.urandom(4096)


def test_round_trip(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:42")

    assert sealed.ciphertext != IMAGE
    assert len(sealed.ciphertext) == 12 + len(IMAGE) + 16
    assert sealed.wrapped_key.provider == "keyfile"
    assert sealed.wrapped_key.key_version == 1
    assert open_sealed(sealed, master=master, associated_data=b"capture:42") == IMAGE


def test_empty_plaintext_round_trips(master: KeyFileProvider) -> None:
    sealed = seal(b"", master=master, associated_data=b"capture:0")
    assert open_sealed(sealed, master=master, associated_data=b"capture:0") == b""


def test_every_object_gets_its_own_content_key_and_nonce(master: KeyFileProvider) -> None:
    first = seal(IMAGE, master=master, associated_data=b"capture:1")
    second = seal(IMAGE, master=master, associated_data=b"capture:1")

    assert first.ciphertext[:12] != second.ciphertext[:12]
    assert first.ciphertext != second.ciphertext
    assert first.wrapped_key.blob != second.wrapped_key.blob
    first_key = master.unwrap(wrapped=first.wrapped_key)
    second_key = master.unwrap(wrapped=second.wrapped_key)
    assert len(first_key) == len(second_key) == 32
    assert first_key != second_key


@pytest.mark.parametrize("position", [0, 12, 100, -1])
def test_a_flipped_ciphertext_byte_is_detected(master: KeyFileProvider, position: int) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    tampered = bytearray(sealed.ciphertext)
    tampered[position] ^= 0x01

    with pytest.raises(DecryptionError, match="failed authentication"):
        open_sealed(
            dataclasses.replace(sealed, ciphertext=bytes(tampered)),
            master=master,
            associated_data=b"capture:7",
        )


def test_a_truncated_ciphertext_is_refused(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    with pytest.raises(DecryptionError, match="too short"):
        open_sealed(
            dataclasses.replace(sealed, ciphertext=sealed.ciphertext[:20]),
            master=master,
            associated_data=b"capture:7",
        )


def test_wrong_associated_data_is_detected(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    with pytest.raises(DecryptionError):
        open_sealed(sealed, master=master, associated_data=b"capture:8")


def test_a_ciphertext_cannot_be_swapped_between_ids(master: KeyFileProvider) -> None:
    a = seal(b"raw image of object a", master=master, associated_data=b"capture:a")
    b = seal(b"raw image of object b", master=master, associated_data=b"capture:b")
    # Moving a's whole sealed object (ciphertext and its key) under id b does not open.
    with pytest.raises(DecryptionError):
        open_sealed(a, master=master, associated_data=b"capture:b")
    # Nor does a's ciphertext with b's key.
    with pytest.raises(DecryptionError):
        open_sealed(
            SealedObject(ciphertext=a.ciphertext, wrapped_key=b.wrapped_key),
            master=master,
            associated_data=b"capture:b",
        )


def test_a_flipped_wrapped_key_byte_is_detected(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    blob = bytearray(sealed.wrapped_key.blob)
    blob[20] ^= 0x80
    tampered = dataclasses.replace(
        sealed, wrapped_key=dataclasses.replace(sealed.wrapped_key, blob=bytes(blob))
    )
    with pytest.raises(DecryptionError, match="wrapped content key failed authentication"):
        open_sealed(tampered, master=master, associated_data=b"capture:7")


def test_a_wrong_master_key_version_is_detected(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    master.rotate()
    relabelled = dataclasses.replace(
        sealed, wrapped_key=dataclasses.replace(sealed.wrapped_key, key_version=2)
    )
    with pytest.raises(DecryptionError, match="version 2"):
        open_sealed(relabelled, master=master, associated_data=b"capture:7")


def test_an_unknown_master_key_version_is_refused(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    unknown = dataclasses.replace(sealed, wrapped_key=dataclasses.replace(sealed.wrapped_key, key_version=9))
    with pytest.raises(DecryptionError, match="version 9 does not exist"):
        open_sealed(unknown, master=master, associated_data=b"capture:7")


def test_a_key_wrapped_by_another_provider_is_refused(master: KeyFileProvider) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    foreign = dataclasses.replace(
        sealed, wrapped_key=dataclasses.replace(sealed.wrapped_key, provider="vault-transit")
    )
    with pytest.raises(DecryptionError, match="provider"):
        open_sealed(foreign, master=master, associated_data=b"capture:7")


def test_another_master_key_cannot_open(master: KeyFileProvider, tmp_path: Path) -> None:
    sealed = seal(IMAGE, master=master, associated_data=b"capture:7")
    other = KeyFileProvider(tmp_path / "another-installation")
    with pytest.raises(DecryptionError):
        open_sealed(sealed, master=other, associated_data=b"capture:7")


def test_rotation_keeps_old_objects_readable_and_rewrap_moves_them(master: KeyFileProvider) -> None:
    old = seal(IMAGE, master=master, associated_data=b"capture:old")

    assert master.rotate() == 2
    assert master.current_version == 2
    new = seal(IMAGE, master=master, associated_data=b"capture:new")
    assert new.wrapped_key.key_version == 2
    assert open_sealed(old, master=master, associated_data=b"capture:old") == IMAGE

    moved_key = rewrap(old.wrapped_key, master)
    assert moved_key.key_version == 2
    assert moved_key.blob != old.wrapped_key.blob
    moved = SealedObject(ciphertext=old.ciphertext, wrapped_key=moved_key)
    assert moved.ciphertext is old.ciphertext
    assert open_sealed(moved, master=master, associated_data=b"capture:old") == IMAGE
    assert master.unwrap(wrapped=moved_key) == master.unwrap(wrapped=old.wrapped_key)


def test_wrap_refuses_a_key_of_the_wrong_size(master: KeyFileProvider) -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        master.wrap(key=b"short")
