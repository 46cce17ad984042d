"""Writes dev8 beside this file: pii_dev8.jsonl, a dev set for issue 18's secret detectors (not sealed).

    .venv/bin/python tests/data/safety/make_dev8.py

Method, unlike the earlier corpora (sentences, one value under one key, whole hand-written artifacts): a
grid of *configuration formats* (.env, YAML, INI, TOML, Java properties, HCL tfvars, HTTP headers, curl
lines, netrc, connection strings, JSON API bodies, a tool's metadata dict) crossed with key names taken
from the configuration of widely used software (Django, Rails, Spring, Laravel, Airflow, Grafana, GitLab
runners, Kubernetes secrets, Terraform providers, SMTP relays, payment and messaging SDKs). Every line holds
1-4 secret-bearing keys and 2-5 look-alike keys whose values are just as random (trace and span ids, request
ids, UUIDs, etags, digests, commit hashes, idempotency and cache keys, public keys, nonces, order numbers),
so precision is measured inside the same lines. Values: vendor tokens in their documented formats, random
base64/hex/alnum strings, human-made passwords ("Winter2024!", "correct-horse-battery"), PINs.

Written to measure detect-secrets against ACM's detectors on data neither was written from. It is a dev
set: its misses were read (by kind: passwords under *_PASS names, keys under APP_KEY-like names, random
identifiers under *_key names) and the name rule of acm.domain.pii was written from them, so its figures
after that rule are fitted and say nothing about unseen traffic.
"""

from __future__ import annotations

import json
import random
import string
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
rng = random.Random(8080)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def r(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


# --- values ---------------------------------------------------------------------------------------


def vendor_token() -> str:
    return rng.choice(
        [
            lambda: "npm_" + r(ALNUM, 36),
            lambda: "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "-_", 60),
            lambda: "xoxb-" + r("0123456789", 12) + "-" + r("0123456789", 13) + "-" + r(ALNUM, 24),
            lambda: "SG." + r(ALNUM + "-_", 22) + "." + r(ALNUM + "-_", 43),
            lambda: "SK" + r(HEX, 32),
            lambda: "AKIA" + r(string.ascii_uppercase + string.digits, 16),
            lambda: "sk_live_" + r(ALNUM, 24),
            lambda: "ghp_" + r(ALNUM, 36),
            lambda: "glpat-" + r(ALNUM + "-_", 20),
            lambda: r("0123456789", 10) + ":AA" + r(ALNUM + "-_", 33),  # telegram bot
            lambda: r(HEX, 32) + "-us" + str(rng.randint(1, 20)),  # mailchimp
            lambda: "AKC" + r(ALNUM, 70),  # artifactory
        ]
    )()


def random_secret() -> str:
    return rng.choice(
        [
            lambda: r(B64, rng.choice([32, 40, 44])),
            lambda: r(HEX, rng.choice([32, 40, 64])),
            lambda: r(ALNUM, rng.choice([24, 32, 48])),
            lambda: r(ALNUM + "-_", 43),
        ]
    )()


def human_password() -> str:
    words = ["winter", "sunset", "falcon", "harbor", "maple", "rocket", "copper", "violet", "tiger", "ocean"]
    return rng.choice(
        [
            lambda: rng.choice(words).capitalize() + str(rng.randint(1990, 2026)) + rng.choice("!#$%&*"),
            lambda: "-".join(rng.sample(words, 4)),
            lambda: r(ALNUM, 3) + rng.choice("!@#$%^&*") + r(ALNUM, 6) + rng.choice("!@#$"),
            lambda: rng.choice(words) + rng.choice(words).capitalize() + str(rng.randint(10, 99)),
        ]
    )()


# Secret-bearing keys, by the value they hold (kind for the bench: api_key / token / password).
SECRET_KEYS: list[tuple[str, str, Any]] = [
    ("SECRET_KEY", "api_key", random_secret),  # Django
    ("secret_key_base", "api_key", random_secret),  # Rails
    ("APP_KEY", "api_key", lambda: "base64:" + r(B64, 43) + "="),  # Laravel
    ("AIRFLOW__CORE__FERNET_KEY", "api_key", lambda: r(ALNUM + "-_", 43) + "="),
    ("GF_SECURITY_ADMIN_PASSWORD", "password", human_password),  # Grafana
    ("CI_JOB_TOKEN", "token", lambda: "glcbt-" + r(ALNUM, 24)),
    ("runner_token", "token", lambda: "glrt-" + r(ALNUM + "-_", 20)),
    ("spring.datasource.password", "password", human_password),
    ("spring.mail.password", "password", human_password),
    ("EMAIL_HOST_PASSWORD", "password", human_password),
    ("smtp_pass", "password", human_password),
    ("MAIL_PASSWORD", "password", human_password),
    ("DB_PASS", "password", human_password),
    ("POSTGRES_PASSWORD", "password", human_password),
    ("MONGO_INITDB_ROOT_PASSWORD", "password", human_password),
    ("RABBITMQ_DEFAULT_PASS", "password", human_password),
    ("REDIS_AUTH", "password", lambda: r(ALNUM, 32)),
    ("client_secret", "api_key", random_secret),
    ("clientSecret", "api_key", random_secret),
    ("consumer_secret", "api_key", random_secret),
    ("webhook_secret", "api_key", lambda: "whsec_" + r(ALNUM, 32)),
    ("signing_secret", "api_key", lambda: r(HEX, 32)),
    ("hmac_key", "api_key", lambda: r(HEX, 64)),
    ("encryption_key", "api_key", lambda: r(B64, 44)),
    ("master_key", "api_key", lambda: r(HEX, 32)),
    ("jwt_secret", "api_key", random_secret),
    ("app_secret", "api_key", lambda: r(HEX, 32)),
    ("x-api-key", "api_key", lambda: r(ALNUM, 40)),
    ("apiKey", "api_key", vendor_token),
    ("access_token", "token", vendor_token),
    ("refresh_token", "token", lambda: "1//0" + r(ALNUM + "-_", 60)),
    ("private_token", "token", lambda: "glpat-" + r(ALNUM + "-_", 20)),
    ("bot_token", "token", vendor_token),
    ("NPM_TOKEN", "token", lambda: "npm_" + r(ALNUM, 36)),
    ("TWINE_PASSWORD", "token", lambda: "pypi-AgEIcHlwaS5vcmc" + r(ALNUM + "-_", 60)),
    ("SLACK_BOT_TOKEN", "token", lambda: "xoxb-" + r("0123456789", 12) + "-" + r(ALNUM, 24)),
    ("SENDGRID_API_KEY", "api_key", lambda: "SG." + r(ALNUM + "-_", 22) + "." + r(ALNUM + "-_", 43)),
    ("TWILIO_AUTH_TOKEN", "token", lambda: r(HEX, 32)),
    ("STRIPE_SECRET_KEY", "api_key", lambda: "sk_live_" + r(ALNUM, 24)),
    ("aws_secret_access_key", "api_key", lambda: r(B64, 40)),
    ("passphrase", "password", human_password),
    ("keystore_password", "password", human_password),
    ("admin_pass", "password", human_password),
    ("credentials", "api_key", random_secret),
    ("auth", "token", lambda: r(B64, 36) + "=="),
    ("pin", "pin", lambda: str(rng.randint(1000, 999999))),
]

# Keys whose values look just as random and are not secrets.
LOOKALIKE_KEYS: list[tuple[str, Any]] = [
    ("trace_id", lambda: r(HEX, 32)),
    ("span_id", lambda: r(HEX, 16)),
    ("traceparent", lambda: f"00-{r(HEX, 32)}-{r(HEX, 16)}-01"),
    ("request_id", lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))),
    ("X-Request-Id", lambda: r(ALNUM, 32)),
    ("correlationId", lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))),
    ("etag", lambda: '"' + r(HEX, 32) + '"'),
    ("digest", lambda: "sha256:" + r(HEX, 64)),
    ("commit", lambda: r(HEX, 40)),
    ("GIT_COMMIT", lambda: r(HEX, 40)),
    ("checksum", lambda: r(HEX, 64)),
    ("image", lambda: "registry.example.com/api@sha256:" + r(HEX, 64)),
    ("idempotency_key", lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4))),
    ("cache_key", lambda: "user:" + r(HEX, 24)),
    ("sort_key", lambda: "2026-11-" + str(rng.randint(10, 28)) + "#" + r(HEX, 12)),
    ("public_key", lambda: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + r(B64, 43) + " deploy@ci"),
    ("nonce", lambda: r(ALNUM, 22)),
    ("order_number", lambda: r("0123456789", 16)),
    ("build_id", lambda: r(HEX, 12)),
    ("object_key", lambda: "uploads/" + r(HEX, 32) + ".png"),
    ("session_start", lambda: "2026-11-30T08:" + str(rng.randint(10, 59)) + ":00Z"),
    ("device_id", lambda: r(HEX, 16)),
    ("blob_sha", lambda: r(HEX, 40)),
    ("fingerprint", lambda: ":".join(r(HEX, 2) for _ in range(16))),
    ("file_hash", lambda: r(HEX, 32)),
    ("message_id", lambda: "<" + r(ALNUM, 20) + "@mx.example.net>"),
]


# --- formats --------------------------------------------------------------------------------------
# Each gets [(key, value)] in order and returns (text, {key: (start, end) of the value}) or a dict/metadata.


def f_env(pairs: list[tuple[str, str]]) -> str:
    return "\n".join(f"{k.upper().replace('.', '_').replace('-', '_')}={v}" for k, v in pairs)


def f_export(pairs: list[tuple[str, str]]) -> str:
    return "\n".join(f'export {k.upper().replace(".", "_").replace("-", "_")}="{v}"' for k, v in pairs)


def f_yaml(pairs: list[tuple[str, str]]) -> str:
    head = rng.choice(["apiVersion: v1\nkind: ConfigMap\ndata:", "services:\n  api:\n    environment:", "config:"])
    return head + "\n" + "\n".join(f"  {k}: {v}" for k, v in pairs)


def f_ini(pairs: list[tuple[str, str]]) -> str:
    return f"[{rng.choice(['default', 'database', 'smtp', 'service'])}]\n" + "\n".join(f"{k} = {v}" for k, v in pairs)


def f_toml(pairs: list[tuple[str, str]]) -> str:
    return "[settings]\n" + "\n".join(f'{k.replace(".", "_").replace("-", "_")} = "{v}"' for k, v in pairs)


def f_properties(pairs: list[tuple[str, str]]) -> str:
    return "# generated\n" + "\n".join(f"{k}={v}" for k, v in pairs)


def f_tfvars(pairs: list[tuple[str, str]]) -> str:
    return "\n".join(f'{k.replace(".", "_").replace("-", "_").lower()} = "{v}"' for k, v in pairs)


def f_headers(pairs: list[tuple[str, str]]) -> str:
    return "POST /v2/hooks HTTP/1.1\nHost: api.example.com\n" + "\n".join(
        f"{k.replace('_', '-').title()}: {v}" for k, v in pairs
    )


def f_curl(pairs: list[tuple[str, str]]) -> str:
    return "$ curl -sS https://api.example.com/v1/sync " + " ".join(
        f"-H '{k.replace('_', '-')}: {v}'" for k, v in pairs
    )


def f_logfmt(pairs: list[tuple[str, str]]) -> str:
    return 'level=info msg="config loaded" ' + " ".join(f"{k}={v}" for k, v in pairs)


TEXT_FORMATS = [f_env, f_export, f_yaml, f_ini, f_toml, f_properties, f_tfvars, f_headers, f_curl, f_logfmt]


def with_values(text: str, secrets: list[tuple[str, str, str]]) -> list[dict[str, Any]]:
    spans = []
    for _key, kind, value in secrets:
        start = text.find(value)
        assert start >= 0, (text, value)
        spans.append({"kind": kind, "value": value, "field": "content", "start": start, "end": start + len(value)})
    return spans


def pick() -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    secrets = [(k, kind, gen()) for k, kind, gen in rng.sample(SECRET_KEYS, rng.randint(1, 3))]
    looks = [(k, gen()) for k, gen in rng.sample(LOOKALIKE_KEYS, rng.randint(2, 5))]
    return secrets, looks


def line_text(i: int) -> dict[str, Any]:
    while True:
        secrets, looks = pick()
        if i % 7 == 0:
            secrets = []  # a negative: look-alikes only
        pairs = [(k, v) for k, _kind, v in secrets] + looks
        rng.shuffle(pairs)
        text = rng.choice(TEXT_FORMATS)(pairs)
        if all(text.count(v) == 1 for _k, _kind, v in secrets):  # a PIN's digits may recur in an order number
            break
    return {"channel": "text", "content": text, "metadata": {}, "spans": with_values(text, secrets)}


def line_json(i: int) -> dict[str, Any]:
    secrets, looks = pick()
    if i % 7 == 0:
        secrets = []
    body: dict[str, Any] = {k: v for k, _kind, v in secrets} | dict(looks)
    items = list(body.items())
    rng.shuffle(items)
    wrapped = rng.choice(
        [
            lambda d: {"status": "ok", "data": {"config": d}},
            lambda d: {"result": [{"name": "prod", "settings": d}]},
            lambda d: {"tool": "read_config", "output": d, "took_ms": rng.randint(3, 90)},
        ]
    )(dict(items))
    content = json.dumps(wrapped, ensure_ascii=False)
    spans = [{"kind": kind, "value": v, "field": "content"} for _k, kind, v in secrets]
    return {"channel": "tool_json", "content": content, "metadata": {}, "spans": spans}


def line_metadata(i: int) -> dict[str, Any]:
    secrets, looks = pick()
    if i % 7 == 0:
        secrets = []
    meta = {k: v for k, _kind, v in secrets} | dict(looks)
    spans = [{"kind": kind, "value": v, "field": f"metadata.{k}"} for k, kind, v in secrets]
    return {"channel": "metadata", "content": "config synced", "metadata": meta, "spans": spans}


def main() -> None:
    out = []
    for i in range(320):
        maker = line_text if i % 2 == 0 else (line_json if i % 4 == 1 else line_metadata)
        line = maker(i)
        out.append(
            {
                "id": f"pii-dev8-{i:04d}",
                "lang": "en",
                "channel": line["channel"],
                "role": "tool",
                "content": line["content"],
                "tool_name": "read_config" if line["channel"] != "text" else "",
                "metadata": line["metadata"],
                "spans": line["spans"],
            }
        )
    path = HERE / "pii_dev8.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), "utf-8")
    print(f"wrote {path}: {len(out)} lines, {sum(len(x['spans']) for x in out)} values")


if __name__ == "__main__":
    main()
