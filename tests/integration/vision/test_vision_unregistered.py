"""A vision engine whose key the broker does not know (the person has not run `kronii vision setup`'s
command yet), against a real broker: its plan fails with a sentence that says what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from kronii.vision.adapters.broker_agent import BrokerAgent
from kronii.vision.adapters.capture_frames import ensure_key
from kronii.vision.ports import LeaseRefused

from tests.infra import InfraUrls
from tests.integration.broker.broker_support import start_broker
from tests.integration.vision.vision_desktop import A11yDesktop


def test_an_unregistered_engine_is_told_to_run_kronii_vision_setup(
    infra: InfraUrls, migrated_database: str, a11y_desktop: A11yDesktop, tmp_path: Path
) -> None:
    key = tmp_path / "vision" / "vision.key"
    ensure_key(key)
    with start_broker(infra, migrated_database, a11y_desktop.display, tmp_path / "broker") as broker:
        agent = BrokerAgent(broker.url, "vision-unregistered", key)
        with pytest.raises(LeaseRefused) as refused:
            asyncio.run(agent.acquire(10))
    sentence = str(refused.value)
    assert "does not accept the vision engine's key" in sentence
    assert "kronii vision setup" in sentence
