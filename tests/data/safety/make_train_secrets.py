"""Training data for the learned secret detector (acm.domain.secret_model), issue 18.

Method (unlike the corpora of make_corpora.py, make_dev8.py and the hold-outs): paraphrase FAMILIES of how people
actually hand over a secret in chat, email, tickets, tool output and logs, each family a handful of surface
variants, crossed with value generators and carriers. Every positive line also carries look-alike values
(order numbers, versions, dates, prices, hashes, usernames) labelled negative, and as many lines again are hard
negatives: cue words with no secret ("I reset my password twice"), look-alike values with their own words, and
everyday chat with numbers in it. Phrasings are split, not lines: the dev split holds every fourth phrasing of
each family, never trained on, so the threshold is chosen on phrasings the model has not seen.

    python tests/data/safety/make_train_secrets.py --out /tmp/train_secrets.jsonl  # optional dump, not committed

Each example: {"text", "spans": [[start, end], ...] of secret values, "family", "phrasing" (the template's index in
its family), "split": "train" | "dev"}.
"""

from __future__ import annotations

import argparse
import json
import random
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

Example = dict[str, Any]

# --- values ----------------------------------------------------------------------------------------------------

_WORDS = """harbor maple tiger copper falcon river sunset winter orange violet pepper rocket castle garden
silver cobalt willow ember meadow canyon lotus panda comet marble cedar otter breeze thunder lemon mango
dragon phoenix shadow pixel cactus walnut summit glacier bamboo coral""".split()
_SYMBOLS = "!@#$%&*?_-."


def _password(r: random.Random) -> str:
    w = r.choice(_WORDS)
    style = r.randrange(8)
    if style == 0:
        return w.capitalize() + str(r.randint(10, 9999)) + r.choice("!@#$%&*?")
    if style == 1:  # leet
        table = str.maketrans({"a": "@", "o": "0", "e": "3", "i": "1", "s": "$"})
        return w.capitalize().translate(table) + str(r.randint(1, 99))
    if style == 2:  # random mixed
        alphabet = string.ascii_letters + string.digits + "!@#$%&*"
        return "".join(r.choice(alphabet) for _ in range(r.randint(8, 16)))
    if style == 3:
        return w + r.choice(_SYMBOLS) + r.choice(_WORDS) + str(r.randint(1, 999))
    if style == 4:
        return r.choice(_WORDS).upper()[:4] + str(r.randint(1000, 99999)) + r.choice(_WORDS)
    if style == 5:
        return str(r.randint(1, 99)) + w.capitalize() + r.choice("!?#") + r.choice(_WORDS).capitalize()
    if style == 6:
        return w + str(r.randint(1970, 2025))
    return "".join(r.choice(string.ascii_lowercase + string.digits) for _ in range(r.randint(8, 12)))


def _passphrase(r: random.Random) -> str:
    sep = r.choice("-_.")
    words = [r.choice(_WORDS) for _ in range(r.randint(3, 4))]
    return sep.join(words) + (sep + str(r.randint(1, 99)) if r.random() < 0.6 else "")


def _pin(r: random.Random) -> str:
    return "".join(r.choice(string.digits) for _ in range(r.choice((4, 4, 4, 5, 6))))


def _otp(r: random.Random) -> str:
    code = "".join(r.choice(string.digits) for _ in range(r.choice((6, 6, 6, 4, 5, 7, 8))))
    return ("G-" + code) if r.random() < 0.05 else code


def _api_key(r: random.Random) -> str:
    base62 = string.ascii_letters + string.digits
    style = r.randrange(6)
    if style == 0:
        return r.choice(("sk-", "sk_live_", "pk_live_", "rk_", "key-", "ak_")) + "".join(
            r.choice(base62) for _ in range(r.randint(20, 40))
        )
    if style == 1:
        return "".join(r.choice("0123456789abcdef") for _ in range(r.choice((32, 40, 48))))
    if style == 2:  # JWT-ish

        def part(n: int) -> str:
            return "".join(r.choice(base62 + "-_") for _ in range(n))

        return "eyJ" + part(r.randint(15, 30)) + "." + part(r.randint(20, 40)) + "." + part(r.randint(20, 43))
    if style == 3:
        return "".join(r.choice(base62) for _ in range(r.randint(20, 44)))
    if style == 4:
        return "AKIA" + "".join(r.choice(string.ascii_uppercase + string.digits) for _ in range(16))
    return "".join(r.choice(base62) for _ in range(r.randint(12, 19)))


_VALUES: dict[str, Callable[[random.Random], str]] = {
    "pw": _password,
    "phrase": _passphrase,
    "pin": _pin,
    "otp": _otp,
    "key": _api_key,
}

# --- look-alikes (always negative) ------------------------------------------------------------------------------


def _lookalike(r: random.Random) -> tuple[str, str]:
    """(kind, value) of a value shaped like a secret that is not one; kind picks the words that go with it."""
    d = string.digits
    hexd = "0123456789abcdef"
    kind = r.choice(
        "order version date price hash trace year time phone sku flight room zip model ticket user file amount"
        " invoice build ip percent size tracking last4 voucher points".split()
    )
    v: str
    if kind == "order":
        v = r.choice(("#", "ORD-", "A", "", "PO-")) + "".join(r.choice(d) for _ in range(r.randint(5, 9)))
    elif kind == "version":
        v = r.choice(("v", "", "")) + f"{r.randint(0, 12)}.{r.randint(0, 30)}.{r.randint(0, 99)}"
        v += r.choice(("", "", "-rc1", "-beta2"))
    elif kind == "date":
        y, m, dd = r.randint(2015, 2027), r.randint(1, 12), r.randint(1, 28)
        v = r.choice((f"{y}-{m:02d}-{dd:02d}", f"{dd:02d}/{m:02d}/{y}", f"{m}/{dd}/{y}", f"{y}{m:02d}{dd:02d}"))
    elif kind == "price":
        v = r.choice(("$", "€", "£", "¥", "")) + f"{r.randint(5, 9999)}.{r.randint(0, 99):02d}"
        v = str(r.randint(100, 9999)) if r.random() < 0.4 else v
    elif kind == "last4":
        v = "".join(r.choice(d) for _ in range(4))
    elif kind == "voucher":
        v = "".join(r.choice(d) for _ in range(r.randint(6, 8)))
    elif kind == "points":
        v = str(r.randint(1000, 250000))
    elif kind == "hash":
        v = "".join(r.choice(hexd) for _ in range(r.choice((7, 8, 12, 40, 64))))
    elif kind == "trace":
        v = (
            "".join(r.choice(hexd) for _ in range(32))
            if r.random() < 0.5
            else "-".join("".join(r.choice(hexd) for _ in range(n)) for n in (8, 4, 4, 4, 12))
        )
    elif kind == "year":
        v = str(r.randint(1950, 2030))
    elif kind == "time":
        v = f"{r.randint(0, 23)}:{r.randint(0, 59):02d}"
    elif kind == "phone":
        v = r.choice(
            (f"555-{r.randint(1000, 9999)}", f"+1-202-555-{r.randint(1000, 9999)}", f"138{r.randint(10**7, 10**8 - 1)}")
        )
    elif kind == "sku":
        v = f"{r.choice(('SKU', 'ITEM', 'P'))}-{r.randint(1000, 99999)}-{r.choice('ABCDXZ')}"
    elif kind == "flight":
        v = r.choice(("UA", "BA", "CA", "MU", "DL", "LH")) + str(r.randint(100, 9999))
    elif kind == "room":
        v = str(r.randint(100, 4999))
    elif kind == "zip":
        v = "".join(r.choice(d) for _ in range(5))
    elif kind == "model":
        v = r.choice(("RTX", "iPhone", "XPS", "GT", "A", "Model", "WH-", "SM-G")) + str(r.randint(10, 9999))
    elif kind == "ticket":
        v = r.choice(("JIRA-", "INC", "TICKET-", "SR-", "CASE-", "#")) + str(r.randint(100, 999999))
    elif kind == "user":
        v = r.choice(_WORDS) + r.choice(("", "_", ".")) + str(r.randint(1, 999))
    elif kind == "file":
        v = r.choice(_WORDS) + r.choice(("_v2", "-final", "_2024", "")) + r.choice((".pdf", ".xlsx", ".png", ".py"))
    elif kind == "amount":
        v = str(r.randint(1000, 999999))
    elif kind == "invoice":
        v = "INV-" + str(r.randint(2019, 2027)) + "-" + str(r.randint(1, 99999)).zfill(5)
    elif kind == "build":
        v = str(r.randint(1000, 99999))
    elif kind == "ip":
        v = ".".join(str(r.randint(1, 254)) for _ in range(4))
    elif kind == "percent":
        v = f"{r.randint(1, 99)}.{r.randint(0, 9)}%"
    elif kind == "size":
        v = str(r.choice((1024, 2048, 4096, 8192, 16384, 65536, 1080, 1920)))
    else:  # tracking
        v = "1Z" + "".join(r.choice(string.ascii_uppercase + d) for _ in range(16))
    return kind, v


# Words that go with each look-alike ({x} is the value): the negatives' own context.
_LOOKALIKE_SAY: dict[str, list[str]] = {
    "order": ["order {x}", "order number {x}", "my order {x} hasn't shipped", "订单号{x}", "订单{x}还没发货"],
    "version": ["version {x}", "upgraded to {x}", "running {x}", "版本{x}", "升级到{x}"],
    "date": ["on {x}", "due {x}", "dated {x}", "日期{x}"],
    "price": [
        "it cost {x}",
        "total {x}",
        "priced at {x}",
        "价格{x}",
        '"price": {x}',
        "price: {x}",
        "total price is {x}, but paid {x}",
        "paid {x}",
        "fare {x}",
        "refund of {x}",
    ],
    "last4": [
        "card ending in {x}",
        "Visa ending {x}",
        "last four {x}",
        "account ending in {x}",
        "尾号{x}",
        "the Mastercard that ends in {x}",
        "****{x}",
    ],
    "voucher": ["certificate {x}", "voucher {x}", "gift card {x}", "travel credit {x}", "membership {x}"],
    "points": ["{x} miles", "{x} points", "balance: {x}", "积分{x}"],
    "hash": ["commit {x}", "sha {x}", "checksum {x}", "提交{x}"],
    "trace": ["trace_id {x}", "request id {x}", "correlation id {x}"],
    "year": ["back in {x}", "since {x}", "in {x}", "{x}年"],
    "time": ["at {x}", "around {x}", "{x}见"],
    "phone": ["call me at {x}", "my number is {x}", "电话{x}"],
    "sku": ["item {x}", "SKU {x}", "part {x}"],
    "flight": ["flight {x}", "on {x} tomorrow", "航班{x}"],
    "room": ["room {x}", "suite {x}", "房间{x}"],
    "zip": ["zip {x}", "postcode {x}", "邮编{x}"],
    "model": ["my {x}", "the {x} laptop", "bought a {x}"],
    "ticket": ["ticket {x}", "see {x}", "工单{x}"],
    "user": ["username {x}", "user {x}", "login name {x}", "账号{x}", "用户名{x}"],
    "file": ["attached {x}", "see {x}", "file {x}"],
    "amount": ["{x} steps", "{x} views", "{x} miles", "{x}元"],
    "invoice": ["invoice {x}", "发票{x}"],
    "build": ["build {x}", "job {x}", "PR {x}", "issue {x}"],
    "ip": ["host {x}", "from {x}", "IP {x}"],
    "percent": ["up {x}", "{x} of users"],
    "size": ["{x} tokens", "{x} MB", "{x}px wide", "batch size {x}"],
    "tracking": ["tracking {x}", "快递单号{x}"],
}

_ID_NAMES = [
    "id",
    "request id",
    "x-request-id",
    "trace_id",
    "span id",
    "nonce",
    "salt",
    "etag",
    "idempotency key",
    "idempotency_key",
    "object key",
    "sort_key",
    "cache key",
    "partition key",
    "message id",
    "MessageSid",
    "charge",
    "customer",
    "payment_method",
    "cursor",
    "next_page_token",
    "page token",
    "build id",
    "digest",
    "fingerprint",
    "device id",
    "order id",
    "transaction ref",
    "correlation id",
    "upload id",
    "sms_id",
    "ref",
    "event",
    "invoice",
    "subscription",
    "job id",
    "run id",
    "task",
    "instance",
    "container",
    "pod",
    "请求ID",
    "流水号",
    "订单ID",
]
_NOT_SECRET_CODES = [
    "zip code",
    "postal code",
    "area code",
    "country code",
    "error code",
    "status code",
    "promo code",
    "discount code",
    "coupon code",
    "product code",
    "course code",
    "airport code",
    "referral code",
    "color code",
    "dress code",
    "gift card code",
    "fare code",
    "exit code",
    "return code",
]
_ZH_NUMBER_NAMES = [
    "发票号码",
    "手机号码",
    "订单号码",
    "房间号码",
    "邮编",
    "区号",
    "工号",
    "学号",
    "车牌号",
    "优惠码",
    "邀请码",
    "折扣码",
    "商品编码",
    "邮政编码",
    "错误码",
    "状态码",
    "取餐号",
]
_SYMBOL_WORDS = [
    "COVID-19",
    "x86_64",
    "t3.medium",
    "us-east-1",
    "GPT-4o",
    "Wi-Fi",
    "state-of-the-art",
    "e-mail",
    "Node.js",
    "C++",
    "R2-D2",
    "Web3",
    "B2B",
    "mp3",
    "4K",
    "H2O",
    "PS5",
    "Win10",
    "Python3.11",
    "iOS17",
    "follow-up",
    "check-in",
    "up-to-date",
    "T-shirt",
    "K-pop",
    "Y2K",
    "A1C",
    "N95",
    "5G",
    "MP4",
    "#Summer2024",
    "@jdoe42",
    "U2",
    "blink-182",
    "Catch-22",
    "Ocean's 11",
    "Area51",
    "F-150",
    "i5-1240P",
]


# Names in technical prose that carry digits or dots: packages, classes, platforms, algorithms, licenses.
_TECH = (
    "urllib3 Python2 Python3 py3 jinja2 Jinja2Templates GPT2TokenizerFast boto3 s3fs h2 http2 oauth2 OAuth2Client"
    " base64 utf8 sha256 md5 x509 ipv4 ipv6 log4j k8s i18n l10n a11y web3.py vue3 es6 ES2020 HTML5 CSS3 OpenSSL3"
    " Win32 x64 arm64 aarch64 amd64 ubuntu22.04 debian12 node18 py311 cp311 manylinux2014 numpy2 torch2 keras3"
    " S3Bucket Ec2Client Base64Encoder Sha256Hasher Http2Connection Utf8Decoder Vec3 Mat4x4 Int64 Float32"
    " Uint8Array ES256 RS256 HS256 AES256 RSA2048 P256 X25519 Ed25519 bcrypt2 argon2 pbkdf2 sqlite3 psycopg2"
    " pg8000 lxml2 libxml2 gtk4 qt6 PyQt5 wx3 d3 three.js chart.js next.js vite5 webpack5 babel7 eslint9 nodejs20"
).split()
_LICENSES = [
    "GPL-3.0-or-later",
    "Apache-2.0",
    "MIT-0",
    "LGPL-2.1+",
    "BSD-3-Clause",
    "CC-BY-4.0",
    "MPL-2.0",
    "GPL-2.0-only",
    "AGPL-3.0",
    "EPL-2.0",
    "ISC",
    "Unlicense",
    "0BSD",
    "BSL-1.0",
]


def _tech_name(r: random.Random) -> str:
    style = r.randrange(4)
    if style == 0:  # a dotted module path ending in a class
        return r.choice(_WORDS) + "." + r.choice(_WORDS).capitalize() + r.choice(_WORDS).capitalize()
    if style == 1:  # a CamelCase class with a digit inside
        return r.choice(_WORDS).capitalize() + str(r.randint(2, 64)) + r.choice(_WORDS).capitalize()
    return r.choice(_TECH)


def _identifier(r: random.Random) -> str:
    base62 = string.ascii_letters + string.digits
    hexd = "0123456789abcdef"
    style = r.randrange(7)
    if style == 0:
        return r.choice(
            ("ch_", "pm_", "req_", "cus_", "evt_", "in_", "sub_", "txn_", "msg_", "job_", "run_")
        ) + "".join(r.choice(base62) for _ in range(r.randint(12, 24)))
    if style == 1:
        return "-".join("".join(r.choice(hexd) for _ in range(n)) for n in (8, 4, 4, 4, 12))
    if style == 2:
        return "".join(r.choice(hexd) for _ in range(r.choice((12, 16, 24, 32, 40))))
    if style == 3:
        return f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}#" + "".join(r.choice(hexd) for _ in range(12))
    if style == 4:
        return "uploads/" + "".join(r.choice(hexd) for _ in range(32)) + r.choice((".png", ".pdf", ".jpg"))
    if style == 5:
        return "".join(r.choice(base62) for _ in range(r.choice((16, 22))))
    return r.choice(("SM", "MM", "AC", "CA")) + "".join(r.choice(hexd) for _ in range(32))


def _code_value(r: random.Random) -> str:
    style = r.randrange(4)
    if style == 0:
        return "".join(r.choice(string.digits) for _ in range(r.choice((3, 4, 5, 6, 8))))
    if style == 1:
        return r.choice(("SAVE", "WELCOME", "SPRING", "VIP", "FREE")) + str(r.randint(5, 50))
    if style == 2:
        return "".join(r.choice(string.ascii_uppercase) for _ in range(r.randint(2, 4))) + str(r.randint(100, 999))
    return "".join(r.choice(string.ascii_uppercase + string.digits) for _ in range(r.randint(5, 8)))


# --- families ----------------------------------------------------------------------------------------------------
# {v}: the secret; {a}: a look-alike said with its own words (negative); {svc}: a service; {n}: a name.

_SVC = [
    "wifi",
    "router",
    "vpn",
    "email",
    "gmail",
    "bank app",
    "laptop",
    "server",
    "staging box",
    "admin panel",
    "jenkins",
    "the NAS",
    "Netflix",
    "the shared drive",
    "zoom",
    "database",
    "prod db",
    "the safe",
    "garage",
]
_SVC_ZH = ["wifi", "路由器", "邮箱", "网银", "电脑", "服务器", "后台", "数据库", "保险箱", "门禁", "支付宝", "微信"]
_NAMES = ["Alex", "Sam", "Priya", "Wei", "Maria", "Tom", "Li Na", "Jordan", "Kenji", "Fatima"]

POSITIVE: dict[str, list[tuple[str, str]]] = {
    # family -> [(value kind, template)]
    "wifi_one": [
        ("pw", "the {svc} one is {v}"),
        ("pw", "{svc} one's {v}"),
        ("pw", "for the {svc} it's {v}"),
        ("phrase", "the {svc} one is {v} btw"),
    ],
    "log_in_with": [
        ("pw", "log in with {v}"),
        ("pw", "you can log in with {v}"),
        ("pw", "sign in using {v}"),
        ("pw", "login with admin and {v}"),
        ("phrase", "log in with {v} and change it after"),
    ],
    "use_everywhere": [
        ("pw", "{v} is what I use everywhere"),
        ("pw", "I use {v} for basically everything"),
        ("pw", "{v} is my go-to for most sites"),
        ("phrase", "{v} is the one I reuse everywhere"),
    ],
    "my_password_is": [
        ("pw", "my password is {v}"),
        ("pw", "password's {v}"),
        ("pw", "pw is {v}"),
        ("pw", "pass = {v}"),
        ("phrase", "the passphrase is {v}"),
        ("pw", "my {svc} password is {v}"),
    ],
    "changed_to": [
        ("pw", "I changed it to {v}"),
        ("pw", "new one is {v}"),
        ("pw", "it's {v} now"),
        ("pw", "reset it to {v} for now"),
        ("pw", "updated the {svc} login to {v}"),
    ],
    "try_this": [
        ("pw", "try {v}, that should open it"),
        ("pw", "if that fails try {v}"),
        ("pin", "try {v} on the keypad"),
        ("pw", "maybe {v}? that's the old one"),
    ],
    "credentials_pair": [
        ("pw", "user {a} / {v}"),
        ("pw", "creds: {a} {v}"),
        ("pw", "login {a} pass {v}"),
        ("pw", "username {a}, password {v}"),
    ],
    "texted_code": [
        ("otp", "the code they texted me is {v}"),
        ("otp", "got {v} from the bank"),
        ("otp", "{v} is the code"),
        ("otp", "here's the 2FA: {v}"),
        ("otp", "the text says {v}"),
        ("otp", "code from the app: {v}"),
    ],
    "read_it_out": [
        ("otp", "it just came through, {v}"),
        ("otp", "ok the number on my phone is {v}"),
        ("otp", "reading it off my phone: {v}"),
        ("otp", "they sent {v}, can you enter it"),
    ],
    "verify_message": [
        ("otp", "Your verification code is {v}. It expires in 10 minutes."),
        ("otp", "{v} is your login code. Don't share it."),
        ("otp", "Use {v} to confirm your sign-in"),
        ("otp", "Security code: {v}"),
    ],
    "pin_talk": [
        ("pin", "PIN for the card is {v}"),
        ("pin", "my pin's {v}"),
        ("pin", "door code {v}"),
        ("pin", "gate code is {v}"),
        ("pin", "alarm code {v}, disarm it when you get in"),
        ("pin", "the lockbox combo is {v}"),
        ("pin", "phone unlock is {v}"),
    ],
    "key_paste": [
        ("key", "API key: {v}"),
        ("key", "here's my key {v}"),
        ("key", "paste this token: {v}"),
        ("key", "the token is {v}"),
        ("key", "use this key {v} for the {svc}"),
        ("key", "secret {v}"),
    ],
    "key_env": [
        ("key", "export OPENAI_API_KEY={v}"),
        ("key", "set STRIPE_SECRET to {v}"),
        ("key", "Authorization: Bearer {v}"),
        ("key", "X-Api-Key: {v}"),
        ("key", "token={v}"),
    ],
    "key_prose": [
        ("key", "I'll drop the access token here {v} and revoke it tomorrow"),
        ("key", "the bot's creds are {v}"),
        ("key", "{v} is the service account key"),
        ("key", "webhook secret ended up being {v}"),
    ],
    "remember_as": [
        ("pw", "remember it as {v}"),
        ("pw", "write down {v} somewhere safe"),
        ("pw", "don't lose it: {v}"),
        ("pin", "just memorise {v}"),
    ],
    "type_when_asked": [
        ("pw", "type {v} when it asks"),
        ("pw", "when prompted enter {v}"),
        ("otp", "when it asks for the code put in {v}"),
        ("pin", "punch in {v} at the door"),
    ],
    "shared_by": [
        ("pw", "{n} said the {svc} login is {v}"),
        ("pw", "{n}'s password was {v}"),
        ("pin", "{n} gave me the code, {v}"),
        ("key", "{n} shared the key {v} in slack"),
    ],
    "it_is_after_topic": [
        ("pw", "for the {svc}? it's {v}"),
        ("pw", "{svc}: {v}"),
        ("pw", "{svc} — {v}"),
        ("pin", "{svc} {v}"),
        ("pw", "same as before, {v}"),
        ("pw", "here you go {v}"),
    ],
    "recovery": [
        ("otp", "backup codes: {v} and {v}"),
        ("otp", "recovery code {v}"),
        ("key", "recovery key {v}"),
        ("otp", "one of my backup codes is {v}"),
        ("pw", "the master password is {v}"),
    ],
    "combination": [
        ("pin", "the combination is {v}"),
        ("pin", "combo's {v}"),
        ("pin", "the padlock opens with {v}"),
        ("pin", "bike lock {v}"),
        ("pin", "{v} opens the locker"),
    ],
    "dont_share": [
        ("pw", "don't tell anyone but it's {v}"),
        ("pw", "keep this private: {v}"),
        ("key", "don't commit this, {v}"),
        ("otp", "please don't share, it's {v}"),
    ],
    "zh_password": [
        ("pw", "密码是{v}"),
        ("pw", "码是{v}"),
        ("pw", "{svc}密码：{v}"),
        ("pw", "我的密码{v}"),
        ("pw", "开机密码是{v}"),
        ("pin", "支付密码{v}"),
        ("pin", "银行卡密码是{v}"),
    ],
    "zh_login": [
        ("pw", "登录用{v}"),
        ("pw", "账号{a} 密码{v}"),
        ("pw", "用{v}登进去就行"),
        ("pw", "把{v}输进去就可以了"),
        ("pw", "{svc}的登录密码改成{v}了"),
    ],
    "zh_everywhere": [("pw", "我一直用{v}这个"), ("pw", "我所有网站都用{v}"), ("pw", "老密码{v}你试试")],
    "zh_code": [
        ("otp", "验证码{v}，5分钟内有效"),
        ("otp", "收到的验证码是{v}"),
        ("otp", "短信里的码是{v}"),
        ("otp", "动态码{v}"),
        ("otp", "【银行】您的验证码为{v}，请勿泄露"),
        ("otp", "刚收到{v}，你输一下"),
    ],
    "zh_pin": [("pin", "门禁密码{v}"), ("pin", "保险箱密码是{v}"), ("pin", "取款密码{v}"), ("pin", "锁屏密码是{v}")],
    "zh_key": [
        ("key", "API密钥是{v}"),
        ("key", "令牌：{v}"),
        ("key", "key是{v}"),
        ("key", "把这个token {v} 配上"),
        ("key", "密钥{v}"),
    ],
}

NEGATIVE: dict[str, list[str]] = {
    # cue words without a secret, and look-alikes in a secret's neighbourhood
    "cue_no_secret": [
        "I reset my password {a} times this week... not really, twice",
        "forgot my password again",
        "the password policy needs 12 characters",
        "password reset link expired at {a}",
        "send me the code review for {a}",
        "error code {a} again",
        "the OTP expired after {a}",
        "the token count was {a}",
        "pin {a} on the board",
        "I'll pin the message",
        "API key rotation is on {a}",
        "the 2FA app is on my old phone",
        "it asked for a code but nothing came",
        "check the key on {a}",
        "who has the wifi password?",
        "what's the door code?",
        "密码忘了怎么办",
        "验证码已经过期了",
        "验证码收不到",
        "密码要8位以上",
        "token 用量 {a}",
        "请在{a}前修改密码",
    ],
    "lookalike_talk": ["{a}", "re: {a}", "{a} and {a2}", "can you check {a}?", "{a}, then {a2}", "noted {a}"],
    "chat": [
        "I ran {a} this morning",
        "we got the puppy {a}",
        "see you {a}!",
        "the concert is {a}",
        "my daughter turned 7 {a}",
        "we moved here {a}",
        "I'm reading 1984 again",
        "lol that was {a}",
        "the kids loved it, {a}",
        "just got back from Lisbon {a}",
        "my sister called {a}",
        "我们{a}认识的",
        "周末去爬山了，{a}",
        "孩子今年上小学了",
        "晚上{a}一起吃饭吧",
    ],
    "ops": [
        "deployed {a} to staging",
        "rolled back {a}",
        "build {a} failed on {a2}",
        "merged {a} into main",
        "p95 went up {a}",
        "{a} is the latest release",
        "restarted pod {a2}",
        "partition {a} lagging",
        "the job {a} took {a2}",
        "已发布{a}",
        "回滚到{a}",
    ],
    "identifiers": [
        "{idname}: {id}",
        "{idname}={id}",
        "the {idname} is {id}",
        "{idname} {id} not found",
        "retrying with {idname} {id}",
        '"{idname}": "{id}"',
        "{idname}：{id}",
    ],
    "codes_not_secret": [
        "the {code} is {c}",
        "{code} {c}",
        "{code}: {c}",
        "use {code} {c} at checkout",
        "what's the {code}? {c} I think",
        "{c} is the {code}",
    ],
    "reservations": [
        "my reservation ID is {r}",
        "booking {r} for two",
        "confirmation number {r}",
        "the PNR is {r}",
        "it's {r}",
        "Sure, it's {uid}.",
        "my user id is {uid}",
        "I'm {uid} on there",
        "预订号{r}",
        "确认号是{r}",
    ],
    "zh_numbers": ["{zn}{c}", "{zn}是{c}", "我的{zn}：{c}", "{zn}为{c}，请核对"],
    "words_with_symbols": [
        "{w} and {w} were mentioned",
        "we talked about {w}",
        "running on {w}",
        "{w} all the way!",
        "loved the {w} vibe",
        "it's {w}",
    ],
    "tech_prose": [
        "works with {t}",
        "built with {t} and {t}",
        "using {t} under the hood",
        "install {t} first",
        "from {t} import it",
        "{t} is easy to use",
        "migrated to {t} last week",
        "License: {lic}",
        "requires {t}>=1.2",
        "compatible with {t}",
        "powered by {t}",
        "render it via {t}",
        "pip install {t}",
        "see `{t}` in the docs",
        "用{t}实现的",
        "升级到{t}之后就好了",
    ],
    "shopping": [
        "order {a} arrives {a2}",
        "paid {a} for it",
        "the {a} was on sale",
        "refund for {a}",
        "快递{a}到了",
        "退款{a}已到账",
    ],
}

# --- carriers ------------------------------------------------------------------------------------------------------

_GREET = ["Hi team,\n", "Hello {n},\n", "Hey,\n", "", "Dear support,\n", "您好，\n"]
_SIGN = ["\nThanks", "\nBest, {n}", "\n-- sent from my phone", "", "\n谢谢"]


def _carry(r: random.Random, sentence: str, zh: bool) -> tuple[str, int]:
    """The sentence in a carrier: (text, offset of the sentence inside it)."""
    style = r.randrange(9)
    name = r.choice(_NAMES)
    if style <= 2:  # chat, as is, maybe lower-cased punctuation-free
        return sentence, 0
    if style == 3:  # email
        head = r.choice(_GREET).replace("{n}", name)
        return head + sentence + r.choice(_SIGN).replace("{n}", name), len(head)
    if style == 4:  # ticket
        tag = f"{r.choice(('TICKET', 'SUP', 'HELP', 'INC'))}-{r.randint(100, 99999)}"
        head = f"[{tag}] {r.choice(('Customer note', 'Update', 'Login issue', '用户反馈'))}: "
        return head + sentence, len(head)
    if style == 5:  # a log line
        head = (
            f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:"
            f"{r.randint(0, 59):02d}Z {r.choice(('INFO', 'DEBUG', 'WARN'))} "
        )
        head += r.choice(("chat", "support", "agent")) + ' msg="'
        return head + sentence + '"', len(head)
    if style == 6:  # a tool's JSON member as the redactor reads it ("key: value")
        head = r.choice(("message: ", "text: ", "body: ", "note: ", "content: ", "comment: ", "内容: "))
        return head + sentence, len(head)
    if style == 7:  # chat with a preceding turn fragment
        head = r.choice(("ok so ", "fyi ", "quick one: ", "sorry, ", "also ", "对了，", "顺便说一下，"))
        return head + sentence, len(head)
    if style == 8 and r.random() < 0.5:  # a markdown summary line, as support agents write them
        head = f"- **{r.choice(('Note', 'Details', 'Update', 'Reservation ID', 'Payment', 'Status', '备注'))}**: "
        return head + sentence, len(head)
    head = f"{name}: "
    return head + sentence, len(head)


def _fill(r: random.Random, template: str, value: str | None) -> tuple[str, list[tuple[int, int]]]:
    """Template with its slots filled; the secret's span(s) in the result."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    n = 0
    while pos < len(template):
        i = template.find("{", pos)
        if i < 0:
            out.append(template[pos:])
            break
        out.append(template[pos:i])
        j = template.index("}", i)
        slot = template[i + 1 : j]
        at = sum(map(len, out))
        if slot == "v":
            assert value is not None
            out.append(value)
            spans.append((at, at + len(value)))
        elif slot in ("a", "a2"):
            kind, x = _lookalike(r)
            if "user" in template[max(0, i - 12) : i] or "账号" in template[max(0, i - 4) : i] or "creds" in template:
                x = r.choice(_WORDS) + r.choice(("", "_", ".")) + str(r.randint(1, 999))
            elif template.strip() in (
                "{a}",
                "re: {a}",
                "{a} and {a2}",
                "can you check {a}?",
                "{a}, then {a2}",
                "noted {a}",
            ):
                x = r.choice(_LOOKALIKE_SAY[kind]).replace("{x}", x)
            out.append(x)
        elif slot == "idname":
            out.append(r.choice(_ID_NAMES))
        elif slot == "id":
            out.append(_identifier(r))
        elif slot == "code":
            out.append(r.choice(_NOT_SECRET_CODES))
        elif slot == "c":
            out.append(_code_value(r))
        elif slot == "r":
            out.append("".join(r.choice(string.ascii_uppercase + string.digits) for _ in range(6)))
        elif slot == "uid":
            out.append(
                r.choice(_WORDS)
                + r.choice(("_", ".", ""))
                + r.choice(_WORDS)
                + r.choice(("_", ""))
                + str(r.randint(1, 9999))
            )
        elif slot == "zn":
            out.append(r.choice(_ZH_NUMBER_NAMES))
        elif slot == "w":
            out.append(r.choice(_SYMBOL_WORDS))
        elif slot == "t":
            out.append(_tech_name(r))
        elif slot == "lic":
            out.append(r.choice(_LICENSES))
        elif slot == "svc":
            out.append(r.choice(_SVC_ZH if any("\u4e00" <= c <= "\u9fff" for c in template) else _SVC))
        elif slot == "n":
            out.append(r.choice(_NAMES))
        else:
            out.append(template[i : j + 1])
        n += 1
        pos = j + 1
    return "".join(out), spans


def _variant(r: random.Random, text: str) -> str:
    """Surface noise people type: lower case, no final punctuation, an emoji, a doubled space."""
    if r.random() < 0.15:
        text = text[0].lower() + text[1:] if text else text
    if r.random() < 0.1:
        text += r.choice((" 🙂", " thx", " !!", " 😅", "。"))
    return text


def _with_lookalike(r: random.Random, text: str, spans: list[tuple[int, int]]) -> tuple[str, list[tuple[int, int]]]:
    """Append a look-alike said with its own words after the line, sometimes: negatives beside positives."""
    if r.random() < 0.45:
        kind, x = _lookalike(r)
        tail = r.choice((" (", ". Also ", " and ", ", ", "；")) + r.choice(_LOOKALIKE_SAY[kind]).replace("{x}", x)
        if tail.startswith(" ("):
            tail += ")"
        return text + tail, spans
    return text, spans


def generate(seed: int = 18, per_family: int = 260) -> list[Example]:
    r = random.Random(seed)
    examples: list[Example] = []
    families = [(f, True) for f in POSITIVE] + [(f, False) for f in NEGATIVE]
    for family, positive in families:
        count = per_family if positive else per_family * 2
        for _ in range(count):
            # The dev split: every fourth phrasing of each family, never trained on.
            if positive:
                which = r.randrange(len(POSITIVE[family]))
                kind, template = POSITIVE[family][which]
                value = _VALUES[kind](r)
                sentence, spans = _fill(r, template, value)
            else:
                which = r.randrange(len(NEGATIVE[family]))
                template = NEGATIVE[family][which]
                sentence, spans = _fill(r, template, None)
            sentence = _variant(r, sentence)
            sentence, spans = _with_lookalike(r, sentence, spans)
            zh = any("\u4e00" <= c <= "\u9fff" for c in sentence)
            text, offset = _carry(r, sentence, zh)
            examples.append(
                {
                    "text": text,
                    "spans": [[s + offset, e + offset] for s, e in spans],
                    "family": family,
                    "phrasing": which,
                    "split": "dev" if which % 4 == 3 else "train",
                }
            )
    return examples


def write_jsonl(make: Callable[[int], list[Example]], doc: str | None) -> None:
    """The command line of a training-data generator: its rows of one seed as JSON lines."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args()
    rows = make(args.seed)
    args.out.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), "utf-8")
    print(f"wrote {len(rows)} examples to {args.out}")


def main() -> None:
    write_jsonl(generate, __doc__)


if __name__ == "__main__":
    main()
