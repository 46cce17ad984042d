"""Whole technical artifacts with MANY identifiers and FEW secrets, for the learned secret detector (issue 18).

Hard negatives for training and a dev measure of false flags per 1,000 ids: CI logs, stack traces, HTTP access logs,
k8s events, SQL dumps, order / ticket / shipment records (as the redactor reads a JSON member: "order id: 48213"),
invoices, package lock files, git logs, metrics lines. Ids of many formats: numbers of 4-10 digits, letters and
digits with dashes, versions, build numbers, short hashes, pod names, addresses; each one often recurs in the same
artifact and sits among others of its shape, as real ids do. About one artifact in three also carries one secret
(a password, PIN, code or passphrase) in that artifact's own idiom ("kubectl create secret ... password=...",
"INSERT INTO door_codes (site_id, pin) VALUES (...)"), labelled. Written for this generator: nothing from the
corpora under tests/data/safety/, LoCoMo or tau-bench; the hold-outs and their generators were not opened.

Each family has four layouts (ordering, key spelling, format); layout 3 is the dev split, never trained on.

    python tests/data/safety/make_train_artifacts.py --out /tmp/artifacts.jsonl  # optional dump, not committed

Each example: {"text", "spans": [[start, end], ...] of secret values, "family", "phrasing" (the layout),
"split": "train" | "dev"}.
"""

from __future__ import annotations

import json
import random
import runpy
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

Example = dict[str, Any]
_SECRETS = runpy.run_path(str(Path(__file__).with_name("make_train_secrets.py")))
_password: Callable[[random.Random], str] = _SECRETS["_password"]
_passphrase: Callable[[random.Random], str] = _SECRETS["_passphrase"]
_pin: Callable[[random.Random], str] = _SECRETS["_pin"]
_otp: Callable[[random.Random], str] = _SECRETS["_otp"]

_HEXD = "0123456789abcdef"
_ALNUM = string.ascii_lowercase + string.digits
_SVC = ["api", "billing", "orders", "web", "worker", "auth", "search", "checkout", "ledger", "notify"]
_PKG = ["urllib3", "requests", "lodash", "react-dom", "numpy", "pydantic", "left-pad", "express", "jinja2", "boto3"]
_USERS = ["jdoe", "a.smith", "wei.zhang", "priya_k", "ci-bot", "deploy", "mgarcia", "tkato"]
_STATUS = ["shipped", "pending", "delivered", "cancelled", "on_hold", "refunded"]


class _Ids:
    """Identifier makers; each artifact keeps a pool so the same id recurs, as in real logs."""

    def __init__(self, r: random.Random) -> None:
        self.r = r

    def num(self, lo: int = 4, hi: int = 10) -> str:
        n = self.r.randint(lo, hi)
        return str(self.r.randint(10 ** (n - 1), 10**n - 1))

    def hexs(self, n: int = 7) -> str:
        return "".join(self.r.choice(_HEXD) for _ in range(n))

    def alnum(self, n: int) -> str:
        return "".join(self.r.choice(_ALNUM) for _ in range(n))

    def version(self) -> str:
        r = self.r
        v = f"{r.randint(0, 12)}.{r.randint(0, 40)}.{r.randint(0, 30)}"
        return (
            r.choice(("", "v")) + v + r.choice(("", "", "", f"-rc.{r.randint(1, 5)}", f"+build.{r.randint(10, 9999)}"))
        )

    def prefixed(self) -> str:
        r = self.r
        p = r.choice(("ORD", "INC", "PO", "INV", "SHP", "TCK", "REQ", "CASE", "RMA", "JOB", "W", "A", "BK"))
        sep = r.choice(("-", "", "_", "-"))
        body = self.num(4, 9)
        if r.random() < 0.3:
            body = f"{r.randint(2019, 2026)}-{self.num(4, 6)}"
        tail = r.choice(("", "", "", f"-{r.choice(string.ascii_uppercase)}", f"-{r.randint(1, 99):02d}"))
        return p + sep + body + tail

    def pod(self, svc: str) -> str:
        return f"{svc}-{self.hexs(r_len(self.r))}-{self.alnum(5)}"

    def ip(self) -> str:
        r = self.r
        return f"{r.choice((10, 172, 192))}.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}"

    def tracking(self) -> str:
        r = self.r
        return r.choice(
            (
                f"1Z{self.alnum(6).upper()}{self.num(10, 10)}",
                self.num(10, 10) + self.num(2, 2),
                f"JD{self.num(10, 10)}",
                f"SF{self.num(10, 10)}",
            )
        )

    def any(self) -> str:
        r = self.r
        kind = r.randrange(6)
        if kind == 0:
            return self.num()
        if kind == 1:
            return self.prefixed()
        if kind == 2:
            return self.version()
        if kind == 3:
            return self.hexs(r.choice((7, 8, 10)))
        if kind == 4:
            return f"{self.alnum(3)}-{self.num(4, 6)}".upper()
        return self.num(4, 6)


def r_len(r: random.Random) -> int:
    return r.choice((8, 9, 10))


def _secret(r: random.Random) -> tuple[str, str]:
    kind = r.choice(("password", "password", "passphrase", "pin", "otp"))
    maker = {"password": _password, "passphrase": _passphrase, "pin": _pin, "otp": _otp}[kind]
    return kind, maker(r)


class _Doc:
    """Text built piece by piece; secret values are recorded as spans."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.spans: list[list[int]] = []

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.size += len(text)

    def secret(self, value: str) -> None:
        self.spans.append([self.size, self.size + len(value)])
        self.add(value)

    def line(self, *pieces: str | tuple[str]) -> None:
        """A line; a 1-tuple piece is a secret value."""
        for p in pieces:
            if isinstance(p, tuple):
                self.secret(p[0])
            else:
                self.add(p)
        self.add("\n")

    @property
    def text(self) -> str:
        return "".join(self.parts)


def _ts(r: random.Random, layout: int) -> str:
    d = f"2026-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"
    t = f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
    return (f"{d}T{t}.{r.randint(0, 999):03d}Z", f"{d} {t}", f"[{d} {t}]", f"{t}")[layout]


# --- families --------------------------------------------------------------------------------------------------


def ci_log(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    run, build, sha = ids.num(4, 6), ids.num(3, 6), ids.hexs(7)
    svc = r.choice(_SVC)
    ver = ids.version()
    head = (
        f"Run #{run} (build {build}) on {sha}",
        f"Started by timer; Build #{build}, commit {sha}",
        f"job_id={run} pipeline={build} sha={sha}",
        f"CI run {run} · build.{build} · {sha}",
    )[layout]
    doc.line(head)
    steps = r.randint(6, 14)
    where = r.randrange(steps) if secret else -1
    # One CI step's line each; `i` is the step. Called after the pick, so the draws come in the same order.
    steps_said: list[Callable[[int], str]] = [
        lambda i: f"Step {i + 1}/{steps} : RUN pip install {r.choice(_PKG)}=={ids.version().lstrip('v')}",
        lambda i: (
            f"Tests: {ids.num(3, 4)} passed, {r.randint(0, 9)} skipped in {r.randint(10, 900)}.{r.randint(0, 99)}s"
        ),
        lambda i: f"Uploading artifact {svc}-{ver}-linux-amd64.tar.gz ({ids.num(5, 8)} bytes)",
        lambda i: f"Checking out {sha} (refs/pull/{ids.num(3, 5)}/merge) run {run}",
        lambda i: f"docker build -t registry.acme.io/{svc}:{ver} --build-arg BUILD={build} .",
        lambda i: (
            f"##[group]Job {run}.{r.randint(1, 9)} on runner ubuntu-{r.choice(('22.04', '24.04'))}-{ids.num(4, 6)}"
        ),
        lambda i: f"cache hit: key=deps-{ids.hexs(12)} restored {ids.num(4, 6)} files",
        lambda i: f"Published {svc} {ver} (build {build}) to staging, deploy id {ids.num(5, 8)}",
        lambda i: (
            f"exit code {r.choice((0, 0, 1, 2, 137))} after {r.randint(1, 3600)}s; retry {r.randint(1, 3)} of job {run}"
        ),
    ]
    for i in range(steps):
        ts = _ts(r, layout)
        pick = r.randrange(9)
        if i == where:
            kind, value = _secret(r)
            cue = {
                "password": ("login ci-bot password ", "DB_PASS=", "docker login -u deploy -p ", "admin pw: "),
                "passphrase": ("signing passphrase ", "GPG_PASSPHRASE=", "passphrase: ", "unlock with "),
                "pin": ("HSM pin ", "PIN=", "token pin: ", "smartcard pin "),
                "otp": ("2fa code ", "OTP=", "verification code: ", "mfa code "),
            }[kind][layout]
            doc.line(f"{ts} ", cue, (value,))
        else:
            doc.line(f"{ts} " + steps_said[pick](i))
    doc.line(f"Finished: {r.choice(('SUCCESS', 'FAILURE'))} build {build} ({sha})")
    return doc


def stack_trace(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    req, order = f"req-{ids.hexs(r.choice((6, 8, 12)))}", ids.prefixed()
    svc = r.choice(_SVC)
    if layout in (0, 2):
        doc.line(
            f"{_ts(r, 0)} ERROR [{svc}] request_id={req} order={order} thread=pool-{r.randint(1, 9)}-thread"
            f"-{r.randint(1, 64)}"
        )
        doc.line(
            f"java.lang.IllegalStateException: order {order} not found in shard {ids.num(2, 4)} (code E{ids.num(4, 4)})"
        )
        for _ in range(r.randint(4, 10)):
            cls = r.choice(("OrderService", "PaymentClient", "Repository", "Handler", "RetryTemplate"))
            doc.line(
                f"\tat com.acme.{svc}.{cls}.{r.choice(('place', 'load', 'call', 'apply'))}({cls}.java"
                f":{r.randint(20, 2400)})"
            )
        doc.line(
            f"Caused by: java.net.SocketTimeoutException: connect timed out after {r.randint(1000, 30000)} ms (at"
            f"tempt {r.randint(1, 5)})"
        )
    else:
        doc.line("Traceback (most recent call last):")
        for _ in range(r.randint(3, 8)):
            doc.line(
                f'  File "/app/{svc}/{r.choice(("views", "models", "tasks", "client"))}.py", line'
                f" {r.randint(10, 2400)}, in {r.choice(('get', 'run', 'save', 'fetch'))}"
            )
        doc.line(f"KeyError: '{order}' (request {req}, worker {ids.num(4, 6)}, retry {r.randint(1, 5)})")
    if secret:
        kind, value = _secret(r)
        cue = {
            "password": "  locals: username='svc_app', password=",
            "passphrase": "  locals: key_passphrase=",
            "pin": "  locals: card_pin=",
            "otp": "  locals: otp_code=",
        }[kind]
        doc.line(cue, "'", (value,), "'")
    doc.line(f"request {req} failed for order {order}; see trace {ids.hexs(16)}")
    return doc


def access_log(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    pool = [ids.any() for _ in range(r.randint(3, 6))]
    for _ in range(r.randint(8, 20)):
        ip = ids.ip()
        path = r.choice(
            (
                f"/api/v{r.randint(1, 3)}/orders/{r.choice(pool)}",
                f"/tickets/{r.choice(pool)}/comments",
                f"/static/app.{ids.hexs(8)}.js",
                f"/search?q={r.choice(pool)}&page={r.randint(1, 9)}",
            )
        )
        code, size, ms = r.choice((200, 200, 201, 304, 404, 500)), ids.num(3, 6), f"{r.random():.3f}"
        if layout == 0:
            doc.line(
                f"{ip} - - [{r.randint(1, 28):02d}/Nov/2026:{r.randint(0, 23):02d}:{r.randint(10, 59)}"
                f':{r.randint(10, 59)} +0000] "GET {path} HTTP/1.1" {code} {size} "-" "Mozilla/5.0" {ms}'
            )
        elif layout == 1:
            doc.line(
                json.dumps(
                    {
                        "remote": ip,
                        "method": "GET",
                        "path": path,
                        "status": code,
                        "bytes": int(size),
                        "rt": float(ms),
                        "trace": ids.hexs(16),
                    }
                )
            )
        elif layout == 2:
            doc.line(
                f"{_ts(r, 0)} level=info msg=request method=GET path={path} status={code} size={size} duration"
                f"={ms}s upstream={ids.ip()}:{r.randint(3000, 9000)}"
            )
        else:
            doc.line(f"{_ts(r, 1)} {ip} GET {path} -> {code} ({size} B, {ms} s) req={ids.alnum(10)}")
    if secret:
        kind, value = _secret(r)
        doc.line(
            f"{_ts(r, 0)} WARN support note on ticket {r.choice(pool)}: customer gave the {kind} over chat: ", (value,)
        )
    return doc


def k8s_events(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    svc = r.choice(_SVC)
    pods = [ids.pod(svc) for _ in range(r.randint(2, 4))]
    ver = ids.version().lstrip("v")
    if layout == 0:
        doc.line("LAST SEEN   TYPE      REASON      OBJECT                          MESSAGE")
    for _ in range(r.randint(6, 14)):
        pod = r.choice(pods)
        reason, msg = r.choice(
            (
                (
                    "Pulled",
                    f'Successfully pulled image "registry.acme.io/{svc}:{ver}" in {r.randint(1, 90)}'
                    f".{r.randint(100, 999)}s",
                ),
                ("BackOff", f"Back-off restarting failed container {svc} in pod {pod}"),
                ("Scheduled", f"Successfully assigned prod/{pod} to ip-{ids.ip().replace('.', '-')}.ec2.internal"),
                ("Killing", f"Stopping container {svc} (exit code {r.choice((0, 1, 137, 143))})"),
                ("ScalingReplicaSet", f"Scaled up replica set {svc}-{ids.hexs(r_len(r))} to {r.randint(1, 12)}"),
                (
                    "OOMKilled",
                    f"Memory cgroup out of memory: Killed process {ids.num(4, 7)} ({svc}) total-vm:{ids.num(6, 8)}kB",
                ),
            )
        )
        age = f"{r.randint(1, 59)}{r.choice('smh')}"
        if layout == 0:
            doc.line(f"{age:<11} Normal    {reason:<11} pod/{pod}   {msg}")
        elif layout == 1:
            doc.line(f"{_ts(r, 0)} {reason} pod={pod} uid={ids.hexs(8)} resourceVersion={ids.num(6, 9)} {msg}")
        elif layout == 2:
            doc.line(
                f"- type: Normal\n  reason: {reason}\n  involvedObject: {{kind: Pod, name: {pod}}}\n  count:"
                f" {r.randint(1, 40)}\n  message: {msg}"
            )
        else:
            doc.line(f"Events for {pod}: {reason} x{r.randint(1, 40)} ({age} ago): {msg}")
    if secret:
        kind, value = _secret(r)
        key = {"password": "password", "passphrase": "passphrase", "pin": "pin", "otp": "otp"}[kind]
        doc.line(
            f"$ kubectl -n prod create secret generic {svc}-db --from-literal=username=app --from-literal={key}=",
            (value,),
        )
    return doc


def sql_dump(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    table = r.choice(("orders", "shipments", "tickets", "invoices", "bookings"))
    doc.line(f"-- Dump of table {table}, server version {ids.version().lstrip('v')}, dump id {ids.num(5, 8)}")
    cols = ("id", "ref", "customer_id", "status", "amount", "created_at")
    if layout == 0:
        doc.line(f"INSERT INTO `{table}` ({', '.join(cols)}) VALUES")
    elif layout == 2:
        doc.line(f"COPY public.{table} ({', '.join(cols)}) FROM stdin;")
    elif layout == 3:
        doc.line(" | ".join(cols))
    customers = [ids.num(4, 8) for _ in range(r.randint(2, 4))]
    for _ in range(r.randint(6, 16)):
        row = (
            ids.num(4, 9),
            ids.prefixed(),
            r.choice(customers),
            r.choice(_STATUS),
            f"{r.randint(1, 9999)}.{r.randint(0, 99):02d}",
            _ts(r, 1),
        )
        if layout == 0:
            doc.line(f"({row[0]}, '{row[1]}', {row[2]}, '{row[3]}', {row[4]}, '{row[5]}'),")
        elif layout == 1:
            doc.line(f"INSERT INTO {table} VALUES ({row[0]},'{row[1]}',{row[2]},'{row[3]}',{row[4]},'{row[5]}');")
        elif layout == 2:
            doc.line("\t".join(row))
        else:
            doc.line(" | ".join(row))
    if secret:
        kind, value = _secret(r)
        col = {"password": "password", "passphrase": "recovery_phrase", "pin": "pin", "otp": "otp_code"}[kind]
        doc.line(
            f"INSERT INTO door_access (site_id, user_id, {col}) VALUES ({ids.num(3, 5)}, {ids.num(4, 7)}, '",
            (value,),
            "');",
        )
    return doc


_RECORD_KEYS = [
    ("order id", "order_id", "orderId", "订单号"),
    ("tracking number", "tracking_no", "trackingNumber", "运单号"),
    ("customer id", "customer_id", "customerId", "客户编号"),
    ("ticket", "ticket_ref", "ticketRef", "工单号"),
    ("sku", "sku", "sku", "商品编码"),
    ("invoice number", "invoice_no", "invoiceNo", "发票号码"),
    ("shipment id", "shipment_id", "shipmentId", "发货单号"),
    ("po number", "po_number", "poNumber", "采购单号"),
    ("version", "api_version", "apiVersion", "版本"),
    ("batch", "batch_no", "batchNo", "批次号"),
]
_RECORD_SECRET_KEYS = {
    "password": ("wifi password", "portal_password", "portalPassword", "密码"),
    "passphrase": ("backup passphrase", "vault_passphrase", "vaultPassphrase", "助记词"),
    "pin": ("gate code", "locker_pin", "lockerPin", "取件码"),
    "otp": ("delivery code", "delivery_otp", "deliveryOtp", "验证码"),
}


def record_members(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    """An order / ticket / shipment record, each member as the redactor reads a JSON member: "key words: value"
    (acm.domain.pii reads a member's value after its key); layout 3 is Chinese keys."""
    doc = _Doc()
    keys = r.sample(_RECORD_KEYS, r.randint(5, 9))
    where = r.randrange(len(keys)) if secret else -1
    for i, names in enumerate(keys):
        key = names[layout].replace("_", " ") if layout < 3 else names[3]
        if layout == 2:  # camelCase read apart, as the redactor does
            key = "".join(" " + c.lower() if c.isupper() else c for c in key)
        value = ids.version() if "version" in names[0] else ids.tracking() if "tracking" in names[0] else ids.any()
        doc.line(f"{key}: {value}")
        if i == where:
            kind, secret_value = _secret(r)
            sk = _RECORD_SECRET_KEYS[kind][layout]
            if layout == 2:
                sk = "".join(" " + c.lower() if c.isupper() else c for c in sk)
            doc.line(f"{sk.replace('_', ' ')}: ", (secret_value,))
        if r.random() < 0.3:
            doc.line(f"status: {r.choice(_STATUS)}")
    return doc


def invoice(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    no = ids.prefixed()
    po, cust = ids.num(6, 9), ids.num(4, 8)
    head = (f"INVOICE {no}", f"Invoice No.: {no}   PO: {po}", f"发票 {no} / 客户 {cust}", f"Tax invoice #{no}")[layout]
    doc.line(head)
    doc.line(f"Customer ID {cust}   Account {ids.num(6, 10)}   Date {_ts(r, 1)[:10]}")
    for n in range(r.randint(3, 8)):
        doc.line(
            f"{n + 1:>2}  SKU {ids.alnum(3).upper()}-{ids.num(4, 6)}  qty {r.randint(1, 40)}  @"
            f" {r.randint(1, 999)}.{r.randint(0, 99):02d}  lot {ids.num(4, 8)}"
        )
    doc.line(
        f"Total {r.randint(100, 99999)}.{r.randint(0, 99):02d} EUR   Ref {ids.num(4, 8)}   Due in"
        f" {r.choice((14, 30, 45))} days (PO {po})"
    )
    if secret:
        kind, value = _secret(r)
        doc.line(f"Portal login for payment: {cust} / {kind} ", (value,))
    return doc


def lock_file(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    for _ in range(r.randint(5, 12)):
        name, ver = r.choice(_PKG), ids.version().lstrip("v").split("+")[0]
        digest = "".join(r.choice(_HEXD) for _ in range(64))
        # poetry.lock, package-lock.json, requirements.txt with hashes, yarn.lock
        if layout == 0:
            doc.line(
                f'[[package]]\nname = "{name}"\nversion = "{ver}"\nfiles = '
                f'[{{file = "{name}-{ver}.tar.gz", hash = "sha256:{digest}"}}]'
            )
        elif layout == 1:
            doc.line(
                f'"node_modules/{name}":'
                f' {{"version": "{ver}", "resolved": "https://registry.npmjs.org/{name}/-/{name}-{ver}.tgz"}},'
            )
        elif layout == 2:
            doc.line(f"{name}=={ver} \\\n    --hash=sha256:{digest}")
        else:
            doc.line(f'{name}@^{ver}:\n  version "{ver}"\n  integrity sha512-{ids.alnum(20)}')
    if secret:
        kind, value = _secret(r)
        doc.line(f"# private index: https://pypi.acme.io (user ci, {kind} ", (value,), ")")
    return doc


def git_log(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    issues = [f"{r.choice(('PROJ', 'OPS', 'API', 'WEB'))}-{ids.num(3, 5)}" for _ in range(3)]
    n = r.randint(4, 10)
    where = r.randrange(n) if secret else -1
    for i in range(n):
        sha = ids.hexs(40 if layout == 0 else 7)
        subject = r.choice(
            (
                f"Merge pull request #{ids.num(3, 5)} from acme/fix-{r.choice(issues).lower()}",
                f"Bump {r.choice(_PKG)} from {ids.version().lstrip('v')} to {ids.version().lstrip('v')}",
                f"Release {ids.version()} (build {ids.num(3, 6)})",
                f"{r.choice(issues)}: retry order sync after {r.randint(2, 60)}s timeout",
            )
        )
        if i == where:
            kind, value = _secret(r)
            if layout == 0:
                doc.line(
                    f"commit {sha}\nAuthor: {r.choice(_USERS)}\n\n    Remove hardcoded {kind} ",
                    (value,),
                    " from settings",
                )
            else:
                doc.line(f"{sha} rotate the staging {kind} (old one was ", (value,), ")")
            continue
        if layout == 0:
            doc.line(
                f"commit {sha}\nAuthor: {r.choice(_USERS)} <{r.choice(_USERS)}@acme.io>\nDate:   {_ts(r, 1)}\n\n "
                f"   {subject}\n"
            )
        elif layout == 1:
            doc.line(f"{sha} {subject}")
        elif layout == 2:
            doc.line(f"* {sha} - {subject} ({r.randint(1, 11)} months ago) <{r.choice(_USERS)}>")
        else:
            doc.line(f"{sha} ({r.choice(('HEAD -> main', 'tag: ' + ids.version(), 'origin/release'))}) {subject}")
    return doc


def metrics(r: random.Random, ids: _Ids, layout: int, secret: bool) -> _Doc:
    doc = _Doc()
    svc = r.choice(_SVC)
    pods = [ids.pod(svc) for _ in range(r.randint(2, 3))]
    for _ in range(r.randint(6, 16)):
        name = r.choice(
            ("http_requests_total", "queue_depth", "db_pool_in_use", "orders_placed_total", "latency_ms_bucket")
        )
        pod, value, stamp = r.choice(pods), ids.num(1, 8), ids.num(13, 13)
        if layout == 0:
            doc.line(f'{name}{{service="{svc}",pod="{pod}",code="{r.choice((200, 404, 500))}"}} {value} {stamp}')
        elif layout == 1:
            doc.line(f"{svc}.{name}:{value}|c|#pod:{pod},shard:{ids.num(1, 3)}")
        elif layout == 2:
            doc.line(f"{name},host={pod},region=eu-west-{r.randint(1, 3)} value={value}i {stamp}000000")
        else:
            doc.line(f"{_ts(r, 0)} {pod} {name}={value} p99={r.randint(1, 900)}ms build={ids.num(3, 6)}")
    if secret:
        kind, value = _secret(r)
        doc.line(f"# exporter config: basic auth user=metrics {kind}=", (value,))
    return doc


# Identifiers and counts under words that also cue a secret (code, key, token, pin, pass, login, secret, otp): the
# artifact's own fields, not secrets. Each: (key, a maker of its value).
_CUE_ID_FIELDS: list[tuple[str, Callable[[_Ids], str]]] = [
    ("exit code", lambda i: i.r.choice(("137", "143", "255"))),
    ("status_code", lambda i: i.r.choice(("200", "404", "503"))),
    ("error code", lambda i: f"E{i.num(4, 4)}"),
    ("errorCode", lambda i: f"{i.r.choice(('ERR', 'ORA', 'SQL'))}-{i.num(4, 5)}"),
    ("confirmation code", lambda i: i.alnum(6).upper()),
    ("promo code", lambda i: f"{i.r.choice(('SAVE', 'SPRING', 'WELCOME'))}{i.num(2, 2)}"),
    ("zip code", lambda i: i.num(5, 5)),
    ("country code", lambda i: i.r.choice(("+44", "+86", "+1"))),
    ("hs code", lambda i: f"{i.num(4, 4)}.{i.num(2, 2)}"),
    ("key_id", lambda i: f"k-{i.num(4, 8)}"),
    ("idempotency-key", lambda i: f"{i.hexs(8)}-{i.num(4, 4)}"),
    ("partition key", lambda i: i.num(4, 6)),
    ("cache key", lambda i: f"orders:{i.num(4, 8)}"),
    ("key version", lambda i: i.num(1, 2)),
    ("prompt_tokens", lambda i: i.num(3, 5)),
    ("max_tokens", lambda i: i.r.choice(("1024", "4096", "8192"))),
    ("token_expires_in", lambda i: i.r.choice(("3600", "86400"))),
    ("token id", lambda i: f"tok_{i.num(6, 9)}"),
    ("secret version", lambda i: i.num(1, 3)),
    ("secret_ref", lambda i: f"db-creds-{i.num(4, 4)}"),
    ("password_changed_at", lambda i: f"2026-{i.r.randint(1, 12):02d}-{i.r.randint(1, 28):02d}"),
    ("password min length", lambda i: i.r.choice(("12", "14", "16"))),
    ("login attempts", lambda i: str(i.r.randint(1, 9))),
    ("last login from", lambda i: i.ip()),
    ("pin_attempts_left", lambda i: str(i.r.randint(0, 3))),
    ("pinned version", lambda i: i.version()),
    ("pass", lambda i: f"{i.r.randint(1, 5)}/{i.r.randint(5, 9)}"),
    ("passed", lambda i: i.num(3, 4)),
    ("otp_length", lambda i: i.r.choice(("6", "8"))),
    ("sms_id", lambda i: f"SM{i.hexs(12)}"),
    ("verification_id", lambda i: f"ver_{i.num(5, 8)}"),
    ("auth request", lambda i: f"{i.alnum(4)}-{i.num(4, 6)}"),
    ("session", lambda i: i.alnum(12)),
    ("mfa enrolled devices", lambda i: str(i.r.randint(1, 4))),
]


def _cue_id_line(r: random.Random, ids: _Ids) -> str:
    key, make = r.choice(_CUE_ID_FIELDS)
    value = make(ids)
    return r.choice((f"{key}: {value}", f"{key.replace(' ', '_')}={value}", f'"{key}": "{value}"', f"{key} {value}"))


def _insert_lines(r: random.Random, text: str, spans: list[list[int]], lines: list[str]) -> tuple[str, list[list[int]]]:
    """`lines` put in at line starts, at random; secret spans after them moved."""
    for line in lines:
        starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n" and i + 1 < len(text))]
        at = r.choice(starts)
        if any(s < at < e for s, e in spans):
            continue
        text = text[:at] + line + "\n" + text[at:]
        spans = [[s + len(line) + 1, e + len(line) + 1] if s >= at else [s, e] for s, e in spans]
    return text, spans


FAMILIES: dict[str, Callable[[random.Random, _Ids, int, bool], _Doc]] = {
    "ci_log": ci_log,
    "stack_trace": stack_trace,
    "access_log": access_log,
    "k8s_events": k8s_events,
    "sql_dump": sql_dump,
    "record_members": record_members,
    "invoice": invoice,
    "lock_file": lock_file,
    "git_log": git_log,
    "metrics": metrics,
}


def generate(seed: int = 18, per_family: int = 160, secret_share: float = 0.35) -> list[Example]:
    r = random.Random(seed * 7919 + 1)
    ids = _Ids(r)
    examples: list[Example] = []
    for family, make in FAMILIES.items():
        for _ in range(per_family):
            layout = r.randrange(4)
            doc = make(r, ids, layout, r.random() < secret_share)
            extra = [_cue_id_line(r, ids) for _ in range(r.choice((0, 0, 1, 2, 3)))]
            text, spans = _insert_lines(r, doc.text, doc.spans, extra)
            examples.append(
                {
                    "text": text,
                    "spans": spans,
                    "family": f"artifact:{family}",
                    "phrasing": layout,
                    "split": "dev" if layout == 3 else "train",
                }
            )
    return examples


def main() -> None:
    _SECRETS["write_jsonl"](generate, __doc__)


if __name__ == "__main__":
    main()
