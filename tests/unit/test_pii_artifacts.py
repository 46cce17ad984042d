"""Secrets inside whole artifacts (CI logs, shell history, env dumps, HTTP headers, SMS texts), among values that
only look like secrets. Each case fails without its rule in acm.domain.pii (issue 18, hold-out 7's dev twin)."""

from __future__ import annotations

import pytest

from acm.domain.pii import find_spans


def _found(text: str) -> list[tuple[str, str]]:
    return [(text[s:e], k) for s, e, k in find_spans(text)]


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        # Passwords on a command line.
        ("  512  mysql -u report -p'Gr4nite#Lake' -h db.internal sales", "Gr4nite#Lake", "secret"),
        ("mysqldump -uroot -pPlum9Orchard shop > dump.sql", "Plum9Orchard", "secret"),
        ("PGPASSWORD=Quill7Harbor psql -h 10.0.0.5 -U etl", "Quill7Harbor", "secret"),
        ("run with --password=Mossy8Gate and retry", "Mossy8Gate", "secret"),
        # Credentials in HTTP headers and cookies.
        (
            'curl -H "Authorization: Basic ZXRsOmszOWZKcTJtUHpYNw==" https://x.example',
            "ZXRsOmszOWZKcTJtUHpYNw==",
            "secret",
        ),
        ("Cookie: lang=en; JSESSIONID=9fK2mQ7xLp4Rt8Vw3Zb6; theme=dark", "9fK2mQ7xLp4Rt8Vw3Zb6", "secret"),
        # A random value assigned in a log line (logfmt).
        (
            "level=debug msg=accepted raw=Jk3mP9qLx2Vn8Rt5Wz7Yb4Hc6Fd1Gs0Ae ip=10.1.2.3",
            "Jk3mP9qLx2Vn8Rt5Wz7Yb4Hc6Fd1Gs0Ae",
            "secret",
        ),
        # A one-time code known by the warning that comes with it.
        ("Code 552019 - do not share it with anyone.", "552019", "otp"),
        ("【某银行】登录码 7731，请勿泄露。", "7731", "otp"),
    ],
)
def test_secret_in_artifact(text: str, value: str, kind: str) -> None:
    assert (value, kind) in _found(text)


@pytest.mark.parametrize(
    "text",
    [
        # Commit, release and trace hashes are not secrets.
        "Run actions/checkout@v4\n  with: ref 3f74a5edf9f9faa3a5265aaeba8ec30c0a638f1f",
        "SENTRY_RELEASE=6ad4b5768b703c49b7fe27f9c99cbe1a1b423145",
        # A port flag is not a password; a URL query value is not a logfmt value.
        "docker run -p 8080:80 nginx",
        "https://shop.example/search?q=lamp&session=abc",
        # A number the label next to it names as a serial, though a bank is named earlier.
        "【工商银行】您尾号1234的账户支出100元。流水号 202611301234567890",
        # The id after another name's "=" is that name's, not the token's.
        "auth: token accepted sub=6fb2bde8-75f7-02a3-12ac-2a59509fcf6a scope=orders:read",
        # An order number before a sharing warning is not a code.
        "Order 552019 shipped; do not share your tracking link.",
    ],
)
def test_lookalike_left_alone(text: str) -> None:
    assert _found(text) == []


def test_card_after_a_bank_name_still_found() -> None:
    text = "工商银行卡号 6222 0212 3456 7890 123，户名张伟"
    assert ("6222 0212 3456 7890 123", "card") in _found(text)
