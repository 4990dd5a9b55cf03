"""The master key store choice: the Secret Service only when it serves the key without a prompt.

Each test runs a scripted keyring on a real private session bus (secret_service_double) and checks the
store kronii picks, the sentence that names it, and that Prompt (the call that opens a dialog for a
person) is never made.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kronii.crypto import (
    KeyFileProvider,
    MasterKeyChoice,
    ProviderChain,
    SecretServiceNotReadyError,
    SecretServiceProvider,
    choose_master_key,
    migrate_key_file,
    open_sealed,
    seal,
)

from tests.unit.crypto.secret_service_double import Script, SecretServiceDouble, secret_service_double


def _choose(
    double: SecretServiceDouble, key_dir: Path, monkeypatch: pytest.MonkeyPatch, timeout_s: float = 5.0
) -> MasterKeyChoice:
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", double.address)
    return choose_master_key(
        data_dir=key_dir,
        label="capture/keys/master.key under the data directory",
        secret_service_timeout_s=timeout_s,
    )


def test_no_default_collection_means_the_key_file_and_no_prompt(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script(default_collection=False)) as double:
        choice = _choose(double, key_dir, monkeypatch)
    assert choice.store == "keyfile" and choice.fallback
    assert isinstance(choice.provider, KeyFileProvider)
    assert choice.line == (
        "master key: kept in capture/keys/master.key under the data directory (the Secret Service has no "
        "default keyring; once it has an unlocked default keyring, `kronii keys migrate` moves it there)"
    )
    assert "ReadAlias" in double.calls
    assert not double.called("Prompt") and not double.called("CreateCollection")


def test_a_locked_default_collection_means_the_key_file_and_no_unlock(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script(locked=True)) as double:
        choice = _choose(double, key_dir, monkeypatch)
    assert choice.store == "keyfile"
    assert "the Secret Service's default keyring is locked" in choice.line
    assert double.called("Locked")
    assert not double.called("Unlock") and not double.called("Prompt")


def test_an_unlocked_default_collection_keeps_the_master_key(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script()) as double:
        choice = _choose(double, key_dir, monkeypatch)
        assert choice.store == "secret-service" and not choice.fallback
        assert isinstance(choice.provider, SecretServiceProvider)
        assert choice.line == "master key: kept in the Secret Service's default keyring"
        sealed = seal(b"frame", master=choice.provider, associated_data=b"capture:1")
        assert open_sealed(sealed, master=choice.provider, associated_data=b"capture:1") == b"frame"
        [(attributes, secret)] = double.script.items.values()
        assert attributes["version"] == "1" and len(secret) == 32
    assert not (key_dir / "master.key").exists(), "no key file is written when the keyring keeps the key"
    assert not double.called("Prompt")


def test_a_prompt_object_for_storing_the_key_means_the_key_file_and_it_is_dismissed_not_shown(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script(create_item_prompts=True)) as double:
        choice = _choose(double, key_dir, monkeypatch)
    assert choice.store == "keyfile"
    assert "the Secret Service asked for a prompt to store the master key" in choice.line
    assert double.called("CreateItem") and double.called("Dismiss")
    assert not double.called("Prompt")


def test_a_secret_service_that_does_not_answer_costs_one_timeout_not_a_hang(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script(silent={"ReadAlias"})) as double:
        started = time.monotonic()
        choice = _choose(double, key_dir, monkeypatch, timeout_s=0.5)
        took = time.monotonic() - started
    assert choice.store == "keyfile"
    assert "the Secret Service did not answer within 0.5 s" in choice.line
    assert took < 5.0


def test_an_existing_key_file_stays_the_store_and_the_keyrings_own_keys_still_unwrap(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script()) as double:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", double.address)
        before = SecretServiceProvider()
        under_keyring = seal(b"old frame", master=before, associated_data=b"capture:old")
        before.close()
        KeyFileProvider(key_dir)  # written while the keyring was locked, say
        choice = _choose(double, key_dir, monkeypatch)
        assert choice.store == "keyfile"
        assert (
            "the Secret Service's default keyring is unlocked: `kronii keys migrate` moves it there"
            in choice.line
        )
        assert isinstance(choice.provider, ProviderChain)
        assert (
            open_sealed(under_keyring, master=choice.provider, associated_data=b"capture:old") == b"old frame"
        )
        fresh = seal(b"new frame", master=choice.provider, associated_data=b"capture:new")
        assert fresh.wrapped_key.provider == "keyfile"
    assert not double.called("Prompt")


def test_migrate_moves_the_key_file_into_the_keyring_and_its_images_stay_readable(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script()) as double:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", double.address)
        key_file = KeyFileProvider(key_dir)
        key_file.rotate()
        sealed = seal(b"frame", master=key_file, associated_data=b"capture:1")
        moved = migrate_key_file(key_dir)
        assert moved.versions == (1, 2)
        assert not (key_dir / "master.key").exists()
        choice = _choose(double, key_dir, monkeypatch)
        assert choice.store == "secret-service"
        assert open_sealed(sealed, master=choice.provider, associated_data=b"capture:1") == b"frame"
        assert migrate_key_file(key_dir).versions == ()
    assert not double.called("Prompt")


def test_migrate_into_a_locked_keyring_keeps_the_key_file(
    key_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with secret_service_double(Script(locked=True)) as double:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", double.address)
        before = (KeyFileProvider(key_dir), (key_dir / "master.key").read_bytes())[1]
        with pytest.raises(SecretServiceNotReadyError, match="locked") as raised:
            migrate_key_file(key_dir)
        assert not raised.value.unreachable
    assert (key_dir / "master.key").read_bytes() == before
    assert not double.called("Prompt") and not double.called("CreateItem")
