"""A value is a secret by the meaning of the name it is assigned to, not by how random it looks (issue 18).

Each case failed before the rule: passwords under names the cue words did not cover (DB_PASS, a header
named "…-Pass", a JSON member "smtp_pass"), keys after a qualifier the rules did not list (APP_KEY,
master_key); and the other way round, random values under identifier names (idempotency_key, object_key,
public_key, an image digest) that entropy alone had redacted."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from acm.domain.models import Role, Turn
from acm.domain.pii import find_spans, redact_turn
from acm.domain.scope import Scope


def _secrets(text: str) -> list[str]:
    return [text[s:e] for s, e, k in find_spans(text) if k == "secret"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("DB_PASS=harborMaple42", "harborMaple42"),
        ("services:\n  api:\n    environment:\n      RABBITMQ_DEFAULT_PASS: Winter2024!", "Winter2024!"),
        ("POST /v2/hooks HTTP/1.1\nSmtp-Pass: falcon-copper-ocean-tiger", "falcon-copper-ocean-tiger"),
        ("[default]\nadmin_pass = sunsetRocket77", "sunsetRocket77"),
        ('export APP_KEY="base64:Qm9vdHN0cmFwS2V5Rm9yVGhlQXBw"', "base64:Qm9vdHN0cmFwS2V5Rm9yVGhlQXBw"),
        ('master_key = "9b1f0c2d7e4a8b3c6d5e1f0a2b3c4d5e"', "9b1f0c2d7e4a8b3c6d5e1f0a2b3c4d5e"),
        ("level=info msg=ok AUTH=dXNlcjpwYXNzd29yZDEyMzQ1Ng==", "dXNlcjpwYXNzd29yZDEyMzQ1Ng=="),
    ],
)
def test_value_under_a_secret_name_is_redacted(text: str, value: str) -> None:
    assert value in _secrets(text)


@pytest.mark.parametrize(
    "text",
    [
        "idempotency_key=c8e33ef3-a206-4ee6-9588-ab1694f30773",
        "OBJECT_KEY=uploads/9f9d7f454fb0daa746357d9da06ed3db",
        "PUBLIC_KEY=ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIUgTVyjGJVbBXYncQm9vdHN0cmFwS2V5 deploy@ci",
        "image: registry.example.com/api@sha256:b4cc64e5918f02bbf33016f97e66667364dabca9",
        "token_type: Bearer\npassword_policy: strict\nauth: token accepted",
        "middleware token accepted sub=bfa52761-a028-0dbd-e13c-f5536c9d9350",
    ],
)
def test_random_value_under_an_identifier_name_is_kept(text: str) -> None:
    assert _secrets(text) == []


def _turn(content: str, metadata: dict[str, str]) -> Turn:
    return Turn(
        turn_id="t1",
        scope=Scope("c", "acme", "u1", "agent", "s1"),
        role=Role.TOOL,
        content=content,
        occurred_at=datetime(2026, 12, 1, tzinfo=UTC),
        tool_name="read_config",
        metadata=metadata,
    )


def test_json_member_and_metadata_names_count() -> None:
    body = {"config": {"smtp_pass": "copperViolet31", "idempotency_key": "6552c1a9-3004-4c71-87e7-0bd8f21e22b4"}}
    turn, counts = redact_turn(_turn(json.dumps(body), {"DB_PASS": "oceanTiger58", "trace_id": "4032b4ddd5889014"}))
    assert "copperViolet31" not in turn.content and "oceanTiger58" not in turn.metadata.values()
    assert "6552c1a9-3004-4c71-87e7-0bd8f21e22b4" in turn.content and turn.metadata["trace_id"] == "4032b4ddd5889014"
    assert counts == {"secret": 2}
