"""docs/asyncapi.json must be what `python -m acm.asyncapi docs/asyncapi.json` generates, and list every topic.
(That the catalogue matches what the services subscribe: tests/integration/test_asyncapi_consumers.py.)"""

from pathlib import Path

from acm import asyncapi, topics

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_asyncapi_document_matches_the_code() -> None:
    committed = (ROOT / "docs" / "asyncapi.json").read_text()
    assert committed == asyncapi.render(), "out of date: run `python -m acm.asyncapi docs/asyncapi.json`"


def test_every_topic_has_its_payload_publisher_and_consumer_groups_in_the_document() -> None:
    names = {value for name, value in vars(topics).items() if name.isupper() and isinstance(value, str)}
    assert names == set(asyncapi.BODIES) == set(asyncapi.PRODUCERS)
    channels = asyncapi.document()["channels"]
    for topic in names:
        assert f"{topic}:publish" in channels
        assert "acm.v1.Envelope" in channels[f"{topic}:publish"]["description"]
    for consumer in asyncapi.CONSUMERS:
        channel = channels[f"{consumer.topic}:{consumer.group}"]
        assert channel["address"] == consumer.topic
        assert f"`{consumer.group}`" in channel["description"]
        assert f"acm.v1.{_message(consumer.topic)}" in channel["description"]
        assert f"{topics.dead_letter(consumer.group)}:publish" in channels


def test_the_gateway_keeps_the_dead_letters_of_every_group_but_the_warm_ups_and_its_own() -> None:
    groups = {c.group for c in asyncapi.CONSUMERS} - {asyncapi.WARM_GROUP, "gateway-dead-letters"}
    assert set(topics.DEAD_LETTER_GROUPS) == groups


def _message(topic: str) -> str:
    """The body's message type by protobuf's naming: turn_received -> TurnReceived; a dead-letter topic's DeadLetter."""
    if topic not in asyncapi.BODIES:
        return "DeadLetter"
    return "".join(part.capitalize() for part in asyncapi.BODIES[topic].split("_"))
