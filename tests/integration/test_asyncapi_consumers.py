"""The AsyncAPI catalogue (acm.asyncapi.CONSUMERS) is what the services subscribe: the embedded process
calls every service's register() exactly as their own processes do, so its subscriptions are theirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from acm import asyncapi
from acm.adapters.embedded_bus import EmbeddedBus
from acm.ports.bus import RecordHandler
from acm_cli.embedded import EmbeddedAcm, EmbeddedSettings
from acm_gateway.app import WARM_GROUP


async def test_the_catalogue_lists_every_subscription_of_the_services(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    subscribed: list[asyncapi.Consumer] = []
    real_subscribe = EmbeddedBus.subscribe

    def recording(
        bus: EmbeddedBus,
        topic: str,
        group: str,
        handler: RecordHandler,
        *,
        from_now: bool = False,
        concurrency: int = 1,
    ) -> None:
        # Each gateway replica has its own warm-up group; the catalogue names it by its template.
        named = asyncapi.WARM_GROUP if group.startswith(f"{WARM_GROUP}.") else group
        subscribed.append(asyncapi.Consumer(topic, named, from_now))
        real_subscribe(bus, topic, group, handler, from_now=from_now, concurrency=concurrency)

    monkeypatch.setattr(EmbeddedBus, "subscribe", recording)
    async with EmbeddedAcm(EmbeddedSettings(data_dir=tmp_path / "acm", listen_addr="127.0.0.1:0")):
        pass

    assert sorted(subscribed, key=str) == sorted(asyncapi.CONSUMERS, key=str)
