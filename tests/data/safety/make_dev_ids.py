"""A dev set for the redaction rules' precision on ids (issue 18): tool JSON with many id-like members and a few
real secrets, each member labelled by what its key NAME means, not by any rule of acm.domain.pii.

Method (unlike the corpora, the training generators and the hold-outs): API responses of the kinds agents call
(orders, payments, CI runs, OAuth and login answers, webhooks, cloud resources, search pages), built from a table
of key names, each with a value maker shaped as real services print that field (UUIDs, ULIDs, Stripe-like
`ch_3N...` ids, 40-hex commits, semver with build metadata, base64 cursors, weak and strong ETags, sha256
checksums), in four key spellings (snake_case, camelCase, kebab-case header style, Title Case). Which names are
secret was decided by what the field holds, before any rule was run:

- secret: a credential that lets its holder act (api_key, client_secret, password, otp, pin, cvv, session_token,
  access / refresh / id tokens, authorization and cookie headers, webhook and signing secrets, private keys);
- not secret: identifiers and references, even under a word that cues a secret: idempotency keys (a dedup id the
  client makes up), ETags, cursors and page tokens (pagination state), key_id / kid (names a key), client_id
  (public in OAuth), public keys, checksums, versions and builds, token_type and expires_in, secret_name /
  secret_arn (name a secret, hold none).

Ambiguous and left out: session_id (a bearer cookie in web apps, a correlation id in chat and call logs), nonce,
OAuth state.

    python tests/data/safety/make_dev_ids.py --out /tmp/dev_ids.jsonl  # optional dump, not committed

Each example: {"text": the JSON, "secrets": [path, ...], "ids": [path, ...]} (a path: keys and indices from the
root to a string leaf), "family".
"""

from __future__ import annotations

import base64
import json
import random
import runpy
import string
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

Example = dict[str, Any]
Maker = Callable[[random.Random], str]

_B62 = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_WORDS = "amber basil cinder delta ember fjord grove harvest indigo juniper kestrel lantern".split()


def _s(r: random.Random, alphabet: str, n: int) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


# --- identifier values ----------------------------------------------------------------------------------------


def _uuid(r: random.Random) -> str:
    return str(uuid.UUID(int=r.getrandbits(128), version=4))


def _ulid(r: random.Random) -> str:
    return "01" + _s(r, _CROCKFORD, 24)


def _stripe_like(prefix: str) -> Maker:
    return lambda r: f"{prefix}_{r.choice('123')}{_s(r, _B62, r.choice((14, 16, 24)))}"


def _num(lo: int, hi: int) -> Maker:
    return lambda r: str(r.randint(10 ** (lo - 1), 10**hi - 1))


def _semver(r: random.Random) -> str:
    v = f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 40)}"
    tail = r.choice(
        ("", f"-rc.{r.randint(1, 4)}", f"+build.{r.randint(1, 9999)}", f"-beta.{r.randint(1, 9)}+{_s(r, _HEX, 7)}")
    )
    return r.choice(("", "v")) + v + tail


def _build(r: random.Random) -> str:
    return r.choice(
        (
            str(r.randint(100, 99999)),
            f"2026{r.randint(1, 12):02d}{r.randint(1, 28):02d}.{r.randint(1, 9)}",
            f"b{r.randint(1000, 9999)}-{_s(r, _HEX, 7)}",
        )
    )


def _etag(r: random.Random) -> str:
    return r.choice(
        (f'W/"{_s(r, _HEX, 4)}-{_s(r, _B62, 27)}"', f'"{_s(r, _HEX, 32)}"', f'"{_s(r, _HEX, 8)}-{_s(r, _HEX, 12)}"')
    )


def _cursor(r: random.Random) -> str:
    raw = json.dumps({"id": r.randint(1, 10**7), "ts": r.randint(1_700_000_000, 1_800_000_000)}).encode()
    return r.choice((base64.urlsafe_b64encode(raw).decode().rstrip("="), _s(r, _B62, 24), f"c_{_s(r, _B62, 20)}"))


def _checksum(r: random.Random) -> str:
    return r.choice((f"sha256:{_s(r, _HEX, 64)}", _s(r, _HEX, 64), f"md5-{_s(r, _HEX, 32)}", _s(r, _HEX, 40)))


def _idempotency(r: random.Random) -> str:
    return r.choice((_uuid(r), _s(r, _B62, 32), f"order-{r.randint(1000, 99999)}-{_s(r, _HEX, 8)}"))


def _sku(r: random.Random) -> str:
    return f"{_s(r, string.ascii_uppercase, 3)}-{r.randint(100, 9999)}-{r.choice(('BLK', 'S', 'XL', '500ML'))}"


def _key_id(r: random.Random) -> str:
    return r.choice((_s(r, _HEX, 40), f"k-{_s(r, _B62, 12)}", _uuid(r), f"AKID{_s(r, string.ascii_uppercase, 8)}"))


def _client_id(r: random.Random) -> str:
    return r.choice(
        (f"{r.randint(10**11, 10**12)}-{_s(r, _B62.lower(), 32)}.apps.example.com", _s(r, _B62, 22), _uuid(r))
    )


def _public_key(r: random.Random) -> str:
    return r.choice((f"pk_live_{_s(r, _B62, 24)}", f"ssh-ed25519 {_s(r, _B62 + '+/', 68)}"))


def _trace(r: random.Random) -> str:
    return r.choice(
        (_s(r, _HEX, 32), f"00-{_s(r, _HEX, 32)}-{_s(r, _HEX, 16)}-01", f"Root=1-{_s(r, _HEX, 8)}-{_s(r, _HEX, 24)}")
    )


def _page_token(r: random.Random) -> str:
    return r.choice((_s(r, _B62, 40), _cursor(r)))


def _arn(r: random.Random) -> str:
    return (
        f"arn:aws:secretsmanager:eu-west-1:{r.randint(10**11, 10**12)}:secret:prod/{r.choice(_WORDS)}-{_s(r, _B62, 6)}"
    )


# --- secret values ---------------------------------------------------------------------------------------------


def _api_key(r: random.Random) -> str:
    return r.choice(
        (_s(r, _B62, 32), _s(r, _HEX, 40), f"live_{_s(r, _B62, 28)}", f"{_s(r, _B62, 8)}.{_s(r, _B62, 24)}")
    )


def _password(r: random.Random) -> str:
    return r.choice(
        (
            f"{r.choice(_WORDS).capitalize()}{r.randint(10, 9999)}{r.choice('!#$%')}",
            _s(r, _B62 + "!@#%^&*", r.randint(10, 18)),
            f"{r.choice(_WORDS)}-{r.choice(_WORDS)}-{r.choice(_WORDS)}",
        )
    )


def _jwt(r: random.Random) -> str:
    head = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT"}').decode().rstrip("=")
    return f"{head}.{_s(r, _B62 + '-_', 60)}.{_s(r, _B62 + '-_', 43)}"


def _opaque_token(r: random.Random) -> str:
    return r.choice((_s(r, _B62, 40), _jwt(r), f"{_s(r, _B62, 16)}.{_s(r, _B62, 27)}"))


def _bearer(r: random.Random) -> str:
    return "Bearer " + _opaque_token(r)


def _cookie(r: random.Random) -> str:
    return f"sid={_s(r, _B62, 32)}; Path=/; HttpOnly"


def _webhook_secret(r: random.Random) -> str:
    return r.choice((f"whsec_{_s(r, _B62, 32)}", _s(r, _B62, 32)))


# --- the key table: (spellings' words, maker, secret?) ----------------------------------------------------------

_IDS: list[tuple[str, Maker]] = [
    ("order id", _num(6, 10)), ("order id", _stripe_like("ord")), ("trace id", _trace), ("request id", _uuid),
    ("request id", _ulid), ("span id", lambda r: _s(r, _HEX, 16)), ("sku", _sku), ("build", _build),
    ("version", _semver), ("api version", lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"),
    ("commit", lambda r: _s(r, _HEX, 40)), ("commit sha", lambda r: _s(r, _HEX, 7)), ("etag", _etag),
    ("cursor", _cursor), ("next cursor", _cursor), ("idempotency key", _idempotency), ("checksum", _checksum),
    ("key id", _key_id), ("kid", _key_id), ("client id", _client_id), ("public key", _public_key),
    ("charge", _stripe_like("ch")), ("payment intent", _stripe_like("pi")), ("customer", _stripe_like("cus")),
    ("invoice id", _stripe_like("in")), ("installation id", _num(6, 9)), ("run id", _num(9, 11)),
    ("message id", lambda r: f"<{_s(r, _B62, 20)}@mail.example.com>"), ("thread id", lambda r: _s(r, _HEX, 16)),
    ("correlation id", _uuid), ("page token", _page_token), ("next page token", _page_token),
    ("token type", lambda r: "Bearer"), ("expires in", lambda r: str(r.choice((3600, 7200, 86400)))),
    ("token id", _stripe_like("tok")), ("secret name", lambda r: f"prod/{r.choice(_WORDS)}/db"),
    ("secret arn", _arn), ("image", lambda r: f"registry.example.com/{r.choice(_WORDS)}:{_semver(r)}"),
    ("tracking number", lambda r: f"1Z{_s(r, _CROCKFORD, 6)}{r.randint(10**9, 10**10)}"),
    ("device id", _uuid), ("session count", _num(1, 3)), ("pin attempts left", lambda r: str(r.randint(0, 3))),
    ("password updated at", lambda r: f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}T10:00:00Z"),
    ("otp length", lambda r: r.choice(("6", "8"))), ("cache key", lambda r: f"{r.choice(_WORDS)}:{_s(r, _HEX, 12)}"),
    ("x request id", _uuid), ("blob", lambda r: _s(r, _HEX, 40)),
    ("object key", lambda r: f"uploads/2026/{_uuid(r)}.pdf"),
]  # fmt: skip
_SECRETS: list[tuple[str, Maker]] = [
    ("api key", _api_key), ("client secret", lambda r: _s(r, _B62 + "-_~", 40)), ("password", _password),
    ("otp", lambda r: _s(r, string.digits, 6)), ("pin", lambda r: _s(r, string.digits, 4)),
    ("cvv", lambda r: _s(r, string.digits, 3)), ("session token", _opaque_token), ("access token", _opaque_token),
    ("refresh token", _opaque_token), ("id token", _jwt), ("authorization", _bearer), ("cookie", _cookie),
    ("webhook secret", _webhook_secret), ("signing secret", lambda r: _s(r, _HEX, 32)),
    ("db password", _password), ("secret access key", lambda r: _s(r, _B62 + "/+", 40)), ("x api key", _api_key),
    ("verification code", lambda r: _s(r, string.digits, 6)), ("passcode", lambda r: _s(r, string.digits, 6)),
]  # fmt: skip


def _spell(words: str, style: int) -> str:
    parts = words.split()
    if style == 0:
        return "_".join(parts)
    if style == 1:
        return parts[0] + "".join(p.capitalize() for p in parts[1:])
    if style == 2:
        return "-".join(p.capitalize() for p in parts)  # a header: X-Request-Id
    return " ".join(p.capitalize() for p in parts)


_SHAPES = ("order", "payment", "ci_run", "auth", "webhook", "cloud", "search")
_PLAIN = {
    "status": ("ok", "succeeded", "pending", "failed", "queued"),
    "currency": ("EUR", "USD", "CNY"),
    "region": ("eu-west-1", "us-east-2", "ap-southeast-1"),
}


def _record(r: random.Random, style: int, n_ids: int, secret: bool) -> tuple[dict[str, Any], list[str], list[str]]:
    obj: dict[str, Any] = {}
    ids, secrets = [], []
    for words, make in r.sample(_IDS, n_ids):
        key = _spell(words, style)
        if key in obj:
            continue
        obj[key] = make(r)
        ids.append(key)
    for key, values in r.sample(sorted(_PLAIN.items()), 2):
        obj[key] = r.choice(values)
    obj["amount"] = r.randint(100, 999999)
    if secret:
        words, make = r.choice(_SECRETS)
        key = _spell(words, style)
        if key not in obj:
            obj[key] = make(r)
            secrets.append(key)
    keys = list(obj)
    r.shuffle(keys)
    return {k: obj[k] for k in keys}, ids, secrets


def generate(seed: int = 18, n: int = 600, secret_share: float = 0.4) -> list[Example]:
    """`n` tool outputs: a record, a page of records, or a record wrapped in an envelope; JSON as tools print it."""
    r = random.Random(seed * 104_729 + 7)
    examples: list[Example] = []
    for _ in range(n):
        style = r.randrange(4)
        shape = r.choice(_SHAPES)
        secret_paths: list[list[Any]] = []
        id_paths: list[list[Any]] = []
        if shape == "search":  # a page of records and its paging state
            items = []
            for i in range(r.randint(2, 5)):
                rec, ids, secrets = _record(r, style, r.randint(3, 6), r.random() < secret_share / 3)
                items.append(rec)
                id_paths += [["data", i, k] for k in ids]
                secret_paths += [["data", i, k] for k in secrets]
            cursor_key = _spell(r.choice(("next cursor", "next page token", "cursor")), style)
            obj: dict[str, Any] = {"data": items, cursor_key: _page_token(r), "has_more": True}
            id_paths.append([cursor_key])
        else:
            rec, ids, secrets = _record(r, style, r.randint(5, 10), r.random() < secret_share)
            if r.random() < 0.4:  # an envelope: {"result": {...}, "meta": {"request_id": ...}}
                meta_key = _spell("request id", style)
                obj = {"result": rec, "meta": {meta_key: _uuid(r), "took_ms": r.randint(1, 900)}}
                id_paths += [["result", k] for k in ids] + [["meta", meta_key]]
                secret_paths += [["result", k] for k in secrets]
            else:
                obj = rec
                id_paths += [[k] for k in ids]
                secret_paths += [[k] for k in secrets]
        text = json.dumps(obj, indent=r.choice((None, 2)), ensure_ascii=False)
        examples.append({"text": text, "secrets": secret_paths, "ids": id_paths, "family": f"tool_json:{shape}"})
    return examples


def main() -> None:
    write_jsonl = runpy.run_path(str(Path(__file__).with_name("make_train_secrets.py")))["write_jsonl"]
    write_jsonl(generate, __doc__)


if __name__ == "__main__":
    main()
