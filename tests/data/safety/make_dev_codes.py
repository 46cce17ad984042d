"""A dev set for one-time codes (issue 18): agent-session turns where a number or short code sits beside a code-ish
word but is NOT a one-time code, next to real one-time codes said in many ways, each labelled by what the value is
(decided when the template was written, before any rule of acm.domain.pii was run on it).

Method (unlike the corpora, the training generators and the hold-outs): a table of turn templates, each a list of
fragments, some of them slots filled by a value maker and labelled `otp` or not; crossed with brands, carriers
(user, assistant, tool output as JSON an API prints, tool-call arguments) and languages (English, Chinese). The
look-alikes are the everyday neighbours of a one-time code: error and exit codes, HTTP status, promo and coupon
codes, booking and confirmation references, IATA and postal codes, country and currency codes, SKUs, versions,
ticket and order numbers, totals, quantities, times, rooms, a card network's approval code on a receipt, "2FA
enabled", the count of codes sent, a phone's last digits the code went to, the code's time to live. The codes:
SMS, e-mail and authenticator codes, "your code is", words between the cue and the code, the code first, spaced or
dashed groups, JSON members (`otp`, `verification_code`, `mfa_code`, `验证码`, …), 验证码 / 动态码 / 校验码 messages.

Seed 31 is the one looked at while the rules were changed; seed 3131 is only measured (numbers, never read).

    python tests/data/safety/make_dev_codes.py --seed 31 --out /tmp/dev_codes.jsonl  # optional dump

Each line has the shape of tests/data/safety/pii*.jsonl (id, role, content, channel, lang, spans with start, end,
kind, value; tool_name), so `acm_benchmarks.safety.evaluate_pii` measures it; plus "family" and "negatives" (the
look-alike values in it).
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

Line = dict[str, Any]
Maker = Callable[[random.Random], str]

BRANDS_EN = ("Chase", "Revolut", "Uber", "Airbnb", "Coinbase", "PayPal", "Acme Bank", "Lyft", "Okta", "Steam")
BRANDS_ZH = ("招商银行", "支付宝", "京东", "美团", "12306", "工商银行", "滴滴出行", "携程", "淘宝", "微信支付")


# --- value makers ------------------------------------------------------------------------------------------------


def _digits(lo: int, hi: int) -> Maker:
    def make(r: random.Random) -> str:
        n = r.randint(lo, hi)
        return str(r.randint(1, 9)) + "".join(str(r.randint(0, 9)) for _ in range(n - 1))

    return make


def _code(r: random.Random) -> str:
    """A one-time code as services print it: 4-8 digits, sometimes grouped."""
    d = _digits(6, 6)(r) if r.random() < 0.7 else _digits(4, 8)(r)
    if len(d) == 6 and r.random() < 0.25:
        return d[:3] + r.choice((" ", "-")) + d[3:]
    if len(d) == 8 and r.random() < 0.3:
        return d[:4] + "-" + d[4:]
    return d


def _code_plain(r: random.Random) -> str:
    return _digits(4, 8)(r) if r.random() < 0.3 else _digits(6, 6)(r)


def _alnum(n: int) -> Maker:
    return lambda r: "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(n))


def _promo(r: random.Random) -> str:
    return r.choice(("SAVE", "WELCOME", "SPRING", "BLACKFRIDAY", "VIP", "FREESHIP")) + str(
        r.choice((10, 15, 20, 25, 2024))
    )


def _iata(r: random.Random) -> str:
    return r.choice(("SFO", "JFK", "LHR", "PVG", "PEK", "HND", "CDG", "FRA", "SIN", "DXB", "CAN", "SZX"))


def _zip(r: random.Random) -> str:
    return r.choice(("94107", "10001", "60614", "02139", "98109", "30301", "73301", "85001"))


def _postcode_cn(r: random.Random) -> str:
    return r.choice(("100080", "200120", "518057", "310012", "610041", "430074"))


def _price(r: random.Random) -> str:
    return f"{r.randint(1000, 9999)}.{r.randint(0, 99):02d}"


def _time(r: random.Random) -> str:
    return f"{r.randint(6, 23):02d}{r.choice(('00', '15', '30', '45'))}"


def _epoch(r: random.Random) -> str:
    return str(r.randint(1_733_000_000, 1_765_000_000))


# --- templates -----------------------------------------------------------------------------------------------------
# A fragment is a literal string, or (maker, is_code). Channels: "text" (user / assistant), "tool_json".

Frag = str | tuple[Maker, bool]
C: tuple[Maker, bool] = (_code, True)  # a real one-time code
CP: tuple[Maker, bool] = (_code_plain, True)


def N(m: Maker) -> tuple[Maker, bool]:  # a look-alike slot, short for the tables below
    return (m, False)


D4, D5, D6, D8 = N(_digits(4, 4)), N(_digits(5, 5)), N(_digits(6, 6)), N(_digits(8, 8))

# Look-alikes in English text.
NEG_EN: list[list[Frag]] = [
    ["The payment API returned error code ", D5, ", so I'll retry with a different card."],
    ["Stripe says code ", D4, ": the card was declined by the issuer."],
    ["The build failed with exit code ", N(_digits(1, 3)), " after ", D4, " ms."],
    ["Got HTTP status code ", N(lambda r: r.choice(("404", "503", "429", "500"))), " from the booking service."],
    ["Use promo code ", N(_promo), " at checkout for 15% off."],
    ["Your coupon code ", D6, " takes $20 off orders over $100."],
    ["Enter discount code ", D4, " at checkout to get free shipping."],
    ["Your booking code is ", N(_alnum(6)), " and your seat is 14C."],
    ["The hotel confirmation code is ", D8, "; check-in is after 3 pm."],
    ["Your reservation confirmation number is ", D8, "."],
    ["Flight ", N(_iata), " to ", N(_iata), " departs at ", N(_time), ", gate B12."],
    ["The airport code for Shanghai Pudong is ", N(lambda r: "PVG"), "."],
    ["Ship it to zip code ", N(_zip), ", apartment 4B."],
    ["My postal code is ", N(_zip), " if you need it for the address."],
    ["Country code +", N(lambda r: r.choice(("44", "86", "49", "33"))), ", currency code ", N(lambda r: "EUR"), "."],
    ["Product code ", D5, " is out of stock; SKU ", D6, " is the closest match."],
    ["The item code on the box reads ", D6, "."],
    ["The code 2024.", N(_digits(1, 1)), " release changed the login page."],
    ["Please quote ticket number ", D6, " when you call back."],
    ["Your order total is $", N(_price), " including tax."],
    ["I need ", N(_digits(4, 4)), " units of part 77-", D4, " by Friday."],
    ["Meet at ", N(_time), " in room ", D4, "."],
    ["2FA is enabled on your account since ", N(lambda r: str(r.randint(2019, 2025))), "."],
    ["We sent ", N(_digits(4, 4)), " verification codes yesterday, up 12% on the week."],
    ["The verification code was sent to the number ending in ", D4, "."],
    ["The code expires in 10 minutes; you have requested it ", N(_digits(1, 1)), " times."],
    ["Your verification status is pending since ", N(_epoch), "."],
    ["I wrote the code for ticket ", D5, " and pushed it in commit a1b2c3d."],
    ["The source code is ", D4, " lines long after the refactor."],
    ["Error codes ", D4, " and ", D4, " both mean the session timed out."],
    ["", D5, " is the zip code for the warehouse."],
    ["The auth code on the receipt is ", D6, ", approved at ", N(_time), "."],
    ["Your card payment was approved, approval code ", D6, "."],
    ["The confirmation code for your table is ", D6, "; the reservation is held for 15 minutes."],
    ["Your quote ", D6, " is valid for 30 minutes at this price."],
    ["The app sent ", D4, " push notifications last night."],
    ["Verification: passed on ", N(lambda r: f"2024-{r.randint(1, 12):02d}-{r.randint(10, 28)}"), ", case ", D6, "."],
    ["The MFA device count is 2 and the account id is ", D8, "."],
    ["The code review for PR ", D4, " is done."],
    ["Use the code in branch release-", D4, " for the hotfix."],
    ["The gift card code is ", N(_alnum(10)), ", balance $50."],
    ["Call our support line and press 1; your case code is ", D6, "."],
    ["Your order code is ", D6, "; keep it for returns."],
    ["", D5, ", the zip code, is on the label."],
    ["my member code is ", D6, " if the desk asks"],
]

# Real one-time codes in English text.
POS_EN: list[list[Frag]] = [
    ["Your {brand} verification code is ", C, ". Don't share it with anyone."],
    ["{brand}: your security code is ", C, ". It expires in 10 minutes."],
    ["", CP, " is your {brand} login code."],
    ["G-", CP, " is your Google verification code."],
    ["Use ", CP, " to sign in to {brand}. Never share this code."],
    ["the code they texted me is ", C],
    ["ok my 2FA code is ", C, " now"],
    ["the authenticator app shows ", C, " right now, hurry"],
    ["here's the OTP: ", C],
    ["The SMS code I got from {brand} is ", CP, "."],
    ["the one-time passcode in the email was ", C],
    ["I just got the code, it's ", CP],
    ["the verification code {brand} sent me a minute ago is ", C],
    ["Enter the code ", CP, " to verify your email address."],
    ["my MFA code: ", C],
    ["{brand} sign-in code: ", C, " (valid for 5 minutes)"],
    ["Code: ", CP, ". Do not share this code. {brand} will never call you to ask for it."],
    ["the login code from the text message is ", CP, ", can you finish the transfer?"],
    ["TOTP for the admin console: ", CP],
    ["yes, the code on my phone says ", CP],
    ["", CP, " — that's the code from the text"],
    ["Here you go: ", CP, " (the SMS code)"],
    ["Your {brand} code is ", CP, "."],
    ["{brand} verify code: ", CP],
    ["I have your code, it's ", CP],
]

NEG_ZH: list[list[Frag]] = [
    ["支付接口返回错误码 ", D5, "，我换一张卡再试。"],
    ["接口报错：状态码 ", N(lambda r: r.choice(("404", "502", "429"))), "，请稍后重试。"],
    ["结算时输入优惠码 ", N(_promo), " 可减20元。"],
    ["您的兑换码 ", N(_alnum(8)), " 已发放到账户。"],
    ["收货地址的邮编是 ", N(_postcode_cn), "。"],
    ["邮政编码：", N(_postcode_cn), "，收件人张先生。"],
    ["航班 CA", D4, " 从 ", N(_iata), " 飞往 ", N(_iata), "，", N(_time), " 起飞。"],
    ["订单号 ", N(_digits(16, 16)), "，实付金额 ", N(_price), " 元。"],
    ["短信验证码已发送至尾号", D4, "的手机，请查收。"],
    ["验证码校验失败，错误码 ", D5, "，请重新获取。"],
    ["今天共发送验证码 ", D4, " 条，比昨天多。"],
    ["已开启两步验证，绑定时间 ", N(lambda r: f"2024年{r.randint(1, 12)}月"), "。"],
    ["您的预订确认号为 ", D8, "，入住时请出示。"],
    ["商品编码 ", D6, " 暂时缺货。"],
    ["请在 ", N(_time), " 前到 ", D4, " 会议室。"],
    ["工单号 ", D6, " 已转交二线处理。"],
    ["刷卡消费已批准，授权码 ", D6, "，请保留小票。"],
    ["进程退出码 ", N(_digits(1, 3)), "，耗时 ", D4, " 毫秒。"],
    ["实名认证状态：已通过，认证时间 ", N(_epoch), "。"],
    ["国家代码 +86，币种代码 CNY，金额 ", N(_price), "。"],
]

POS_ZH: list[list[Frag]] = [
    ["【{brand}】您的验证码为", C, "，5分钟内有效，请勿泄露。"],
    ["【{brand}】验证码：", CP, "。您正在登录，如非本人操作请忽略。"],
    ["动态码 ", C, "，用于本次支付确认。"],
    ["我收到的验证码是", CP, "，你帮我填一下"],
    ["短信验证码：", CP],
    ["{brand}校验码", CP, "，请在页面输入完成验证。"],
    ["验证码刚发过来了，是 ", CP],
    ["您的动态密码为", CP, "，切勿告诉他人。"],
]

# Tool JSON: an API's answer or a tool call's arguments, each member (name, maker, is_code).
JsonMember = tuple[str, Maker, bool]
JSON_NEG: list[JsonMember] = [
    ("error_code", _digits(4, 5), False),
    ("errcode", _digits(5, 5), False),
    ("code", lambda r: r.choice(("0000", "200", "10086", "40029")), False),
    ("status_code", lambda r: r.choice(("200", "404", "503")), False),
    ("promo_code", _promo, False),
    ("coupon_code", _digits(6, 6), False),
    ("booking_code", _alnum(6), False),
    ("confirmation_number", _digits(8, 8), False),
    ("airport_code", _iata, False),
    ("zip_code", _zip, False),
    ("postal_code", _postcode_cn, False),
    ("country_code", lambda r: r.choice(("US", "CN", "86", "44")), False),
    ("currency_code", lambda r: r.choice(("USD", "CNY", "EUR")), False),
    ("product_code", _digits(5, 6), False),
    ("sku", _digits(6, 6), False),
    ("exit_code", _digits(1, 3), False),
    ("verification_status", lambda r: r.choice(("verified", "pending", "failed")), False),
    ("verified_at", _epoch, False),
    ("version_code", _digits(4, 5), False),
    ("ticket_number", _digits(6, 6), False),
    ("total", _price, False),
    ("quantity", _digits(4, 4), False),
    ("room", _digits(4, 4), False),
    ("mfa_enabled", lambda r: "true", False),
    ("otp_sent_count", _digits(4, 4), False),
    ("code_ttl_seconds", lambda r: r.choice(("300", "600")), False),
    ("otp_expires_at", _epoch, False),
    ("auth_code", _digits(6, 6), False),
    ("authorization_code", _digits(6, 6), False),
    ("approval_code", _digits(6, 6), False),
    ("phone_last4", _digits(4, 4), False),
    ("masked_phone", lambda r: "138****" + _digits(4, 4)(r), False),
    ("cpt_code", _digits(5, 5), False),
    ("order_id", _digits(12, 16), False),
    ("message", lambda r: r.choice(("验证码错误", "invalid code", "code sent", "验证码已发送")), False),
    ("created_at", _epoch, False),
    ("order_code", _digits(6, 6), False),
]
JSON_POS: list[JsonMember] = [
    ("otp", _code_plain, True),
    ("verification_code", _code_plain, True),
    ("mfa_code", _code_plain, True),
    ("sms_code", _code_plain, True),
    ("totp", _code_plain, True),
    ("one_time_password", _code_plain, True),
    ("验证码", _code_plain, True),
    ("login_code", _code_plain, True),
    ("twoFactorCode", _code_plain, True),
    ("email_verification_code", _code_plain, True),
    ("verifyCode", _code_plain, True),
]
TOOLS = ("auth.verify", "payments.charge", "bookings.get", "orders.lookup", "sms.send", "crm.update", "login")


def _spell(name: str, style: int) -> str:
    if style == 1 and "_" in name:
        head, *rest = name.split("_")
        return head + "".join(w.capitalize() for w in rest)
    return name


def _fill(frags: list[Frag], r: random.Random, brand: str) -> tuple[str, list[dict[str, Any]], list[str]]:
    text, spans, negatives = "", [], []
    for frag in frags:
        if isinstance(frag, str):
            text += frag.replace("{brand}", brand)
            continue
        make, is_code = frag
        value = make(r)
        if is_code:
            spans.append({"start": len(text), "end": len(text) + len(value), "kind": "otp", "value": value})
        else:
            negatives.append(value)
        text += value
    return text, spans, negatives


def _text_line(r: random.Random, lang: str, positive: bool) -> Line:
    pool = (POS_EN if positive else NEG_EN) if lang == "en" else (POS_ZH if positive else NEG_ZH)
    brand = r.choice(BRANDS_EN if lang == "en" else BRANDS_ZH)
    frags = r.choice(pool)
    text, spans, negatives = _fill(frags, r, brand)
    if positive and r.random() < 0.5:  # a look-alike in the same turn
        more, _s, neg2 = _fill(r.choice(NEG_EN if lang == "en" else NEG_ZH), r, brand)
        sep = " " if lang == "en" else ""
        if r.random() < 0.5:
            text = text + sep + more
        else:
            shift = len(more) + len(sep)
            spans = [{**s, "start": s["start"] + shift, "end": s["end"] + shift} for s in spans]
            text = more + sep + text
        negatives += neg2
    role = "tool" if text.startswith(("【", "G-")) or "{brand}" in str(frags[0]) else r.choice(("user", "assistant"))
    family = ("pos" if positive else "neg") + f":{lang}:" + str(frags[0])[:24]
    return {
        "role": role,
        "content": text,
        "channel": "text",
        "lang": lang,
        "spans": spans,
        "negatives": negatives,
        "family": family,
        "tool_name": "sms.inbox" if role == "tool" else "",
    }


def _json_line(r: random.Random, positive: bool) -> Line:
    style = r.randrange(2)
    obj: dict[str, Any] = {}
    spans: list[dict[str, Any]] = []
    negatives: list[str] = []
    for name, make, _ in r.sample(JSON_NEG, r.randint(3, 7)):
        value = make(r)
        # APIs print numbers as numbers where they are numbers.
        obj[_spell(name, style)] = int(value) if value.isdigit() and value[0] != "0" and r.random() < 0.5 else value
        negatives.append(value)
    if positive:
        name, make, _ = r.choice(JSON_POS)
        value = make(r)
        obj[_spell(name, style)] = value
        spans.append({"start": 0, "end": 0, "kind": "otp", "value": value})
    keys = list(obj)
    r.shuffle(keys)
    obj = {k: obj[k] for k in keys}
    tool = r.choice(TOOLS)
    if r.random() < 0.3:  # a tool call's arguments, as JSON in JSON
        content = json.dumps({"name": tool, "arguments": json.dumps(obj)})
        role = "assistant"
    else:
        content = json.dumps({"ok": True, "data": obj} if r.random() < 0.5 else obj, ensure_ascii=r.random() < 0.5)
        role = "tool"
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in json.dumps(obj, ensure_ascii=False)) else "en"
    return {
        "role": role,
        "content": content,
        "channel": "tool_json",
        "lang": lang,
        "spans": spans,
        "negatives": negatives,
        "family": "json:" + ("pos" if positive else "neg"),
        "tool_name": tool,
    }


def generate(seed: int = 31, n: int = 900, positive_share: float = 0.35) -> list[Line]:
    """`n` turns: English and Chinese text, and tool JSON; about `positive_share` of them carry a one-time code."""
    r = random.Random(seed * 7919 + 18)
    lines: list[Line] = []
    for i in range(n):
        positive = r.random() < positive_share
        kind = r.random()
        if kind < 0.45:
            line = _text_line(r, "en", positive)
        elif kind < 0.7:
            line = _text_line(r, "zh", positive)
        else:
            line = _json_line(r, positive)
        lines.append({"id": f"codes-{seed}-{i:04d}", **line})
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("-n", type=int, default=900)
    args = parser.parse_args()
    rows = generate(args.seed, args.n)
    args.out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    print(f"wrote {len(rows)} lines to {args.out}")


if __name__ == "__main__":
    main()
