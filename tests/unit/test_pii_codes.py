"""One-time codes and their look-alikes (issue 18, the `otp` placeholder's precision): a number beside a code-ish word
that is another kind of code (a card network's approval, a booking's reference, a zip or error code, a count of codes
sent) keeps its value, while one-time codes said in new ways are still found. Each case fails without its rule in
acm.domain.pii; the examples were written for this file."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest

from acm.domain.pii import PiiRules, find_spans, redact, redact_text

RULES = PiiRules(secret_model=False)  # the rules alone
DEV = Path(__file__).parents[1] / "data" / "safety" / "make_dev_codes.py"


@pytest.mark.parametrize(
    "text",
    [
        # "Auth code" and "confirmation code" among a payment's or a booking's words, with no sign-in's.
        "Card payment approved at the terminal, auth code 093127.",
        "Booked! Your hotel confirmation code is 55128204 for the stay on May 3.",
        "交易成功，授权码 382910，请核对小票。",
        # A noun that names another kind of code.
        "60614 is the zip code we ship from.",
        "60614, the zip code of the warehouse",
        "Your zip code is 60614 and your order code is 482913.",
        "Error codes 5021 and 5022 are retried by the client.",
        # A count: a plural noun after one modifier word, a Chinese measure word.
        "Last week they sent 3120 marketing emails.",
        "昨日短信验证码发送量 4810 条。",
        # Another code's noun between 验证码 and the number.
        "验证码发送失败，错误码 10024。",
        "promo code from email: 4821",
        "Result Code: 4001",  # a Title-case key's name, not a sender's
        "Meeting code: 730215",
        "2024年发送验证码",
    ],
)
def test_look_alikes_keep_their_values(text: str) -> None:
    assert redact(text, RULES).text == text


def test_a_value_the_rules_read_as_another_code_is_no_secret_for_the_model_either() -> None:
    # Without the rules' verdict the learned model scores these numbers by the code-ish words around them.
    for text in (
        "今天共发送验证码 7765 条。",
        "Error codes 9388 and 3428 both mean the session timed out.",
        "my member code is 602217 if the desk asks",
    ):
        assert redact(text).text == text


def test_a_json_member_named_for_an_approval_code_keeps_its_value() -> None:
    charge = {"id": "ch_1", "amount": 4200, "authorization_code": "731904", "authCode": 731904, "approval_code": "a1"}
    assert redact_text(json.dumps(charge), RULES) == json.dumps(charge)
    # An API prints a one-time code under its own name.
    codes = {"verification_code": "731904", "smsVerifyCode": "5521", "step_up_code": "4410", "otpValue": "731904"}
    assert json.loads(redact_text(json.dumps(codes), RULES)) == {k: "[REDACTED:otp]" for k in codes}


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("Code: 793072. Do not share it with anyone.", "793072"),  # a full stop after the code
        ("TOTP for the build server: 602589", "602589"),  # what the code is for, then a colon
        ("the verification code for Acme: 4410", "4410"),
        ("ok I have your code, it's 228104", "228104"),  # "the code, it's …"
        ("Your Steam code is 55120.", "55120"),  # a service's name before "code"
        ("login ok after otp=448210", "448210"),  # key=value
        ("448210 (the code from the e-mail)", "448210"),  # the code first, then what it is
        ("448210 — that's the code they sent", "448210"),
        ("ok, code from SMS: 730215", "730215"),  # a bare code named by where it came from
        ("passcode 730215, expires soon", "730215"),
        ("登录码 7302，请在页面输入", "7302"),
        ("<#> Signal code: 730215", "730215"),  # an SMS that opens with its sender's name
        ("【某商城】730215（某商城验证码），切勿告知他人", "730215"),  # the code first, in Chinese
        ("730215是您的验证码", "730215"),
        ("please type the challenge code 5521 now", "5521"),  # a step-up challenge's code
        ("otp value: 730215", "730215"),
        ("您的認證碼為 730215", "730215"),  # traditional characters
        ("登入碼 730215，請勿外洩", "730215"),
        ("验证码（6位）：730215", "730215"),  # the code's length between the cue and the code
        ("the user entered code 730215 at 10:02", "730215"),
        ("RSA token code 73021544", "73021544"),
        ("Authy shows 730215", "730215"),  # an authenticator app by name
        ("the auth code to log in is 482913", "482913"),  # an ambiguous cue with no payment's words: still a code
        ("the bank sent 482913 via sms", "482913"),  # "via sms" is no count
    ],
)
def test_codes_said_in_new_ways_are_found(text: str, code: str) -> None:
    assert [text[s:e] for s, e, k in find_spans(text, RULES) if k == "otp"] == [code]


def _score(lines: list[dict[str, Any]], rules: PiiRules) -> tuple[int, int, int, int]:
    """(codes, codes redacted, otp placeholders, otp placeholders on a code)."""
    codes = found = placed = right = 0
    for line in lines:
        gold = line["spans"]
        codes += len(gold)
        if line["channel"] == "text":
            spans = find_spans(line["content"], rules)
            found += sum(any(s <= g["start"] and e >= g["end"] for s, e, _k in spans) for g in gold)
            otp = [(s, e) for s, e, k in spans if k == "otp"]
            placed += len(otp)
            right += sum(any(s < g["end"] and e > g["start"] for g in gold) for s, e in otp)
        else:
            out = redact_text(line["content"], rules)
            gone = sum(g["value"] not in out for g in gold)
            found += gone
            placed += out.count("[REDACTED:otp]")
            right += min(out.count("[REDACTED:otp]"), gone)
    return codes, found, placed, right


def test_dev_set_of_codes_and_look_alikes() -> None:
    """tests/data/safety/make_dev_codes.py at seed 3131, which was only measured while the rules were written (its
    misses never read): at least 99 % of the codes found and 98 % of `otp` placeholders on a code (94.5 % and 60.4 %
    before)."""
    lines = runpy.run_path(str(DEV))["generate"](3131)
    codes, found, placed, right = _score(lines, PiiRules())
    assert codes > 100 and found / codes >= 0.99
    assert right / placed >= 0.98
