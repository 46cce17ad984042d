"""Redaction of every string of a turn, and the widened rules (lines written for this file, not the corpora)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from acm.domain.models import Role, Turn
from acm.domain.pii import PiiRules, find_spans, redact, redact_text, redact_turn
from acm.domain.scope import Scope
from acm.domain.textforms import decoded_strings, normalise_width, unescape_with_offsets

SCOPE = Scope("c1", "acme", "u1", "a1", "s1")


def _turn(content: str = "ok", tool_name: str = "", metadata: dict[str, str] | None = None) -> Turn:
    return Turn("t1", SCOPE, Role.TOOL, content, datetime(2026, 12, 1, tzinfo=UTC), tool_name, metadata or {})


# --- the turn's other strings ---------------------------------------------------------------------


def test_metadata_keys_values_and_tool_name_are_redacted() -> None:
    turn = _turn(
        "done",
        tool_name="mailer.send:ops.lead@northwind.example",
        metadata={"billing_card": "5105 1051 0510 5100", "ops.lead@northwind.example": "cc", "source": "web"},
    )
    out, counts = redact_turn(turn)
    assert out.tool_name == "mailer.send:[REDACTED:email]"
    assert out.metadata == {"billing_card": "[REDACTED:card]", "[REDACTED:email]": "cc", "source": "web"}
    assert counts == {"email": 2, "card": 1}
    assert out.turn_id == turn.turn_id and out.scope == turn.scope and out.occurred_at == turn.occurred_at


def test_a_metadata_key_is_the_cue_for_its_value() -> None:
    # "7731" alone is a number; under "door_pin" or "短信验证码" it is a secret.
    out, _ = redact_turn(_turn(metadata={"door_pin": "7731", "短信验证码": "302918", "floor": "7731"}))
    assert out.metadata == {"door_pin": "[REDACTED:secret]", "短信验证码": "[REDACTED:otp]", "floor": "7731"}


def test_tool_json_is_decoded_scanned_and_encoded_back_the_same_way() -> None:
    payload = {"客户": "赵敏", "登录密码": "Qx7!pa55", "订单": "SO-3381", "卡": "6225 8801 2233 4455 667"}
    content = json.dumps(payload)  # ensure_ascii: the cue words arrive as \uXXXX escapes
    assert "\\u5bc6\\u7801" in content
    out, counts = redact_turn(_turn(content))
    assert counts == {"secret": 1, "card": 1}
    back = json.loads(out.content)
    assert back == {**payload, "登录密码": "[REDACTED:secret]", "卡": "[REDACTED:card]"}
    assert out.content.isascii()  # still \uXXXX-escaped, as it came


def test_tool_call_arguments_json_inside_json() -> None:
    args = {"to": "DE44 5001 0517 5407 3249 31", "memo": "rent march"}
    call = {"type": "function", "function": {"name": "bank.transfer", "arguments": json.dumps(args)}}
    out, counts = redact_turn(_turn(json.dumps(call, separators=(",", ":"))))
    assert counts == {"iban": 1}
    inner = json.loads(json.loads(out.content)["function"]["arguments"])
    assert inner == {"to": "[REDACTED:iban]", "memo": "rent march"}
    assert '":"' in out.content  # compact separators kept


def test_numbers_in_json_are_scanned_with_their_key() -> None:
    out, counts = redact_turn(_turn(json.dumps({"otp": 558213, "qty": 558213})))
    assert json.loads(out.content) == {"otp": "[REDACTED:otp]", "qty": 558213}
    assert counts == {"otp": 1}


def test_json_inside_prose_and_truncated_escaped_json() -> None:
    text = 'lookup returned {"email": "r.okoye@lagos-mail.example", "tier": "gold"} at 10:02'
    assert redact_text(text) == 'lookup returned {"email": "[REDACTED:email]", "tier": "gold"} at 10:02'
    # Cut off mid-document (not valid JSON): read unescaped, replaced in the original text.
    truncated = '{"items": [1, 2], "\\u9a8c\\u8bc1\\u7801": "660417", "note": "\\u5df2'
    assert "660417" not in redact_text(truncated)


def test_an_unchanged_turn_is_returned_as_is() -> None:
    turn = _turn('{"status": "shipped", "eta": "2026-12-03"}', "erp.order", {"k": "v"})
    out, counts = redact_turn(turn)
    assert out is turn and counts == {}


def test_rules_still_let_contacts_through_in_metadata() -> None:
    turn = _turn(metadata={"email": "ana@lisboa.example", "iban": "GB33BUKB20201555555555"})
    out, _ = redact_turn(turn, PiiRules(emails=False, phones=False))
    assert out.metadata == {"email": "ana@lisboa.example", "iban": "[REDACTED:iban]"}


def test_redact_turn_is_idempotent() -> None:
    turn = _turn(json.dumps({"pwd": "hunter22!", "n": 1}), "x", {"api_key": "sk-" + "Ab3" * 12})
    once, _ = redact_turn(turn)
    twice, counts = redact_turn(once)
    assert twice == once and counts == {}


# --- text forms --------------------------------------------------------------------------------------


def test_width_normalisation_keeps_offsets() -> None:
    text = "卡号 ６２２２\u3000０２０２\u00a0１１２２"
    assert normalise_width(text) == "卡号 6222 0202 1122"
    assert len(normalise_width(text)) == len(text)
    assert normalise_width("密码：ａｂｃ") == "密码：abc"  # CJK punctuation is left as it is


def test_unescape_maps_back_to_the_original() -> None:
    decoded, starts, ends = unescape_with_offsets('a\\u4e2d\\"b')
    assert decoded == 'a中"b'
    assert (starts[1], ends[1]) == (1, 7)


def test_decoded_strings_pair_values_with_keys() -> None:
    assert decoded_strings(json.dumps({"card_no": "x", "n": [1]})) == ["card_no", "card no: x", "n", "n: 1"]
    assert decoded_strings("plain") == ["plain"]


# --- widened rules (each with a near miss) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("paid with 4012.8888.8888.1881 yesterday", "4012.8888.8888.1881"),
        ("卡：４０１２ ８８８８ ８８８８ １８８１", "４０１２ ８８８８ ８８８８ １８８１"),
        ("card 4012\u00a08888\u00a08888\u00a01881", "4012\u00a08888\u00a08888\u00a01881"),
        ("工行储蓄卡 6212 2611 0200 8812 341", "6212 2611 0200 8812 341"),  # fails Luhn, named a card
        ("send it to gb33 bukb 2020 1555 5555 55 thanks", "gb33 bukb 2020 1555 5555 55"),
        ("the one-time code the app showed me was 204817", "204817"),
        ("type 7731 to confirm the payment", "7731"),
        ("刚收到的验证码，是 558120", "558120"),
        ("ATM PIN 9054", "9054"),
        ("my password is correct-horse-9", "correct-horse-9"),
        ('{"passwd": "Tr0ub4dor&3"}', "Tr0ub4dor&3"),
        ("把密码改成了 Mango#2026", "Mango#2026"),
        ("deploy with d8e8fca2dc0f896fd7cb4cb0031ba249 please", "d8e8fca2dc0f896fd7cb4cb0031ba249"),
        ("social security no. is 219-09-9999", "219-09-9999"),
        ("pls email 张伟的邮箱zw.lee@mail.example", "zw.lee@mail.example"),
    ],
)
def test_widened_rules_catch(text: str, secret: str) -> None:
    assert secret not in redact(text).text


@pytest.mark.parametrize(
    "text",
    [
        "order 4012.8888.8888.1881 was split in two parcels",  # named an order, not a card
        "订单号 6212261102008812341 已发货",
        "the commit d8e8fca2dc0f896fd7cb4cb0031ba249 broke the build",
        "the code review took 45 minutes",
        "the code I wrote in 2019 still runs",
        "password reset link expired, send another",
        "PIN pad is broken",
        "验证码过期了，订单号 20261201",
        "meeting 2026.12.01 at 10.30, budget 1.250.000",
        "policy number 219-09-9999 renews in May",
        "my pass to the museum expired",
    ],
)
def test_near_misses_are_left_alone(text: str) -> None:
    assert redact(text).text == text, find_spans(text)


def test_redact_turn_is_quick_on_a_tool_output() -> None:
    rows = [{"id": i, "sku": f"A-{i:05d}", "note": "加急 deliver before 10:00", "price": 12.5 * i} for i in range(40)]
    turn = _turn(json.dumps({"rows": rows, "owner": {"email": "kim@corp.example"}}))
    start = time.process_time()
    for _ in range(10):
        redact_turn(turn)
    assert (time.process_time() - start) / 10 < 0.03
