"""Crypto-shredding of the bus (docs/privacy.md, "The bus: sealed bodies").

Every event body that carries a user's data is sent sealed: AES-256-GCM under a data key of the scope's owner,
the routing fields (event_id, scope, occurred_at, traceparent, key_id, signature) left in clear. The data keys
live in the gateway's store, wrapped by a master key; a Forget destroys the forgotten owner's keys, so what is
left of their events on Kafka (retention) or in the embedded log can no longer be opened by anyone.

Which key seals a body: the envelope scope's owner, ``key_owner``: its (user, session) when the scope names a
session, else its user (a customer's or client's key only for an envelope whose scope names no user). Every
event of a session, its turns, the memories written from them (the customer- and client-tier statements made in
it included) and the signals, is sealed with that session's key. A session Forget destroys the session's key; a
user Forget every key of the user (each session's and the user's own); a customer Forget every key under the
customer; a client Forget every key of the client. Each level therefore destroys every key that can open the
forgotten subject's records. Records sealed before keys were per session name the user's key (``data_key_id``)
and still open with it (``may_open``).

The data keys are wrapped by a master key, and each row records which one (``master_id``): the gateway accepts
the current master and, while a rotation runs, the previous ones (``MasterKeys``); ``rotate_master`` re-wraps
every row under the current one (``acm keys rotate-master``).

One place: `SealingBus` wraps a service's bus, sealing on publish and opening on delivery, so handlers and
`acm.envelopes.decode` see the clear body. A record whose key is gone is taken as forgotten: skipped and
acknowledged (never dead-lettered), counted in ``acm.bus.forgotten_records`` and logged without content.
Direct Kafka publishers (agents signing their own envelopes) seal the same way: the gateway's GetSealingKey gives
them the scope's key (valid a short while), ``seal_for_publishing`` seals with it before they sign. A clear body
they send is accepted as it is (its bytes stay readable until the topic's retention) unless ingest requires sealed
turns (ACM_REQUIRE_SEALED_TURNS).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from opentelemetry import metrics

from acm.adapters.delivery import wrapped
from acm.domain.models import new_id
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.bus import EventBus, PermanentError, Record, RecordHandler
from acm.v1 import common_pb2, events_pb2

log = logging.getLogger("acm.sealing")
FORGOTTEN_RECORDS = metrics.get_meter("acm").create_counter(
    "acm.bus.forgotten_records", unit="{record}", description="records skipped: their data key was destroyed"
)

# The bodies that carry a user's words or names. The others carry ids, counts and levels only: forget_requested,
# compaction_requested (token counts), schema_changed (an agent's id and version), pool_ready (a version key),
# job_updated (status, counts and an error reason ACM writes, not the user's text).
SEALED_BODIES = frozenset(
    {"turn_received", "memories_written", "memory_edit_requested", "memories_indexed", "prefetch_signal"}
)
KEY_BYTES = 32
# Keys a keyring keeps at most (past it, it forgets them all and reads again).
_MAX_KEPT = 100_000
_NONCE = 12
_AAD_TAG = b"acm.sealed.v1"

# (client_id, customer_id, user_id, session_id) of a data key: "" for the parts below its level.
Owner = tuple[str, str, str, str]


@dataclass(frozen=True, slots=True)
class DataKey:
    key_id: str
    owner: Owner
    secret: bytes


class Forgotten(Exception):
    """The record's data key is gone (its owner was forgotten): the record is unreadable for good."""


class Keyring(Protocol):
    """The data keys: ``current`` the owner's key to seal with (made on first use), ``by_id`` the key a record
    names (None: destroyed or never made), ``forgotten`` drops what a cache keeps of the owners under ``prefix``
    (a Forget seen on the bus)."""

    async def current(self, owner: Owner) -> DataKey: ...

    async def by_id(self, owner: Owner, key_id: str) -> DataKey | None: ...

    def forgotten(self, prefix: Owner) -> None: ...


def key_owner(scope: common_pb2.Scope | Scope) -> Owner:
    """The owner whose key seals an envelope of this scope: its user's session, else its user, else its
    customer (a session without a user has no key of its own)."""
    if scope.user_id:
        return scope.client_id, scope.customer_id, scope.user_id, scope.session_id
    return scope.client_id, scope.customer_id, "", ""


def may_open(key: Owner, record: Owner) -> bool:
    """Whether a key of ``key`` may open a record whose scope makes ``record`` its owner: the record's own key,
    or its user's key (a session's record sealed before keys were per session)."""
    return key == record or (bool(record[3]) and key == (*record[:3], ""))


def owned_by(owner: Owner, prefix: Owner) -> bool:
    """Whether a Forget of ``prefix`` (its empty parts: any) reaches ``owner``'s key."""
    return all(not want or want == have for have, want in zip(owner, prefix, strict=True))


_FORGET_PREFIX: dict[int, Callable[[common_pb2.Scope], Owner]] = {
    events_pb2.FORGET_LEVEL_SESSION: lambda s: (s.client_id, s.customer_id, s.user_id, s.session_id),
    events_pb2.FORGET_LEVEL_USER: lambda s: (s.client_id, s.customer_id, s.user_id, ""),
    events_pb2.FORGET_LEVEL_CUSTOMER: lambda s: (s.client_id, s.customer_id, "", ""),
    events_pb2.FORGET_LEVEL_CLIENT: lambda s: (s.client_id, "", "", ""),
}


def forget_prefix(level: int, scope: common_pb2.Scope) -> Owner | None:
    """The owners whose keys a Forget of ``level`` destroys (a prefix, see owned_by); None: none (a session
    Forget without a session names no key)."""
    make = _FORGET_PREFIX.get(level)
    if make is None or (level == events_pb2.FORGET_LEVEL_SESSION and not scope.session_id):
        return None
    return make(scope)


def _aad(env: events_pb2.Envelope, key_id: str) -> bytes:
    return b"\x00".join(
        (_AAD_TAG, env.event_id.encode(), env.scope.SerializeToString(deterministic=True), key_id.encode())
    )


def seal_with(env: events_pb2.Envelope, key: DataKey) -> None:
    """Seal ``env``'s body in place under ``key`` (the body field cleared, ``sealed`` and ``data_key_id`` set)."""
    body = env.WhichOneof("body")
    if body is None:
        raise ValueError("an envelope without a body has nothing to seal")
    inner = events_pb2.Envelope()
    getattr(inner, body).CopyFrom(getattr(env, body))
    nonce = os.urandom(_NONCE)
    env.ClearField(body)
    env.data_key_id = key.key_id
    env.sealed = nonce + AESGCM(key.secret).encrypt(nonce, inner.SerializeToString(), _aad(env, key.key_id))


def open_with(env: events_pb2.Envelope, key: DataKey) -> None:
    """Put the sealed body back into ``env`` (``sealed`` kept, so the signature still checks over what was sent);
    PermanentError when the bytes or the routing fields they are bound to were altered."""
    sealed = env.sealed
    try:
        plain = AESGCM(key.secret).decrypt(sealed[:_NONCE], sealed[_NONCE:], _aad(env, env.data_key_id))
    except InvalidTag:
        raise PermanentError("sealed body does not open: altered, or not sealed for this event and scope") from None
    inner = events_pb2.Envelope.FromString(plain)
    body = inner.WhichOneof("body")
    if body not in SEALED_BODIES:
        raise PermanentError(f"sealed body is {body or 'empty'}, not a body that is sealed")
    getattr(env, body).CopyFrom(getattr(inner, body))


def seal_for_publishing(
    env: events_pb2.Envelope, key_id: str, secret: bytes, valid_until: datetime, now: datetime | None = None
) -> None:
    """A direct publisher's sealing, before it signs: ``env``'s body sealed in place with the key the gateway's
    GetSealingKey gave for the envelope's scope (its ``key_id``, ``secret``, ``valid_until``). ValueError once the
    key is past ``valid_until`` (a Forget may have destroyed it: ask again) or when the body is not one ACM
    seals."""
    at = now or datetime.now(UTC)
    if at >= valid_until:
        raise ValueError(f"the sealing key {key_id} was valid until {valid_until.isoformat()}: ask GetSealingKey again")
    if not needs_sealing(env):
        raise ValueError(f"a {env.WhichOneof('body') or 'bodiless'} envelope, or one already sealed, is not sealed")
    seal_with(env, DataKey(key_id, key_owner(env.scope), secret))


def needs_sealing(env: events_pb2.Envelope) -> bool:
    return not env.sealed and env.WhichOneof("body") in SEALED_BODIES


async def seal(env: events_pb2.Envelope, keyring: Keyring) -> None:
    """Seal ``env`` under its scope owner's current key when its body carries a user's data (else unchanged).
    Before signing: the signature covers the sealed bytes."""
    if needs_sealing(env):
        seal_with(env, await keyring.current(key_owner(env.scope)))


async def open_sealed(env: events_pb2.Envelope, keyring: Keyring) -> None:
    """Open ``env``'s sealed body in place (clear envelopes are left as they are); Forgotten when its key is
    gone, PermanentError when it was altered."""
    if not env.sealed:
        return
    key = await keyring.by_id(key_owner(env.scope), env.data_key_id)
    if key is None:
        raise Forgotten(env.data_key_id)
    open_with(env, key)


def _is_dead_letter(topic: str) -> bool:
    # A dead-letter record is a DeadLetter holding the original (still sealed) bytes, never an envelope.
    return topic.startswith("acm.dlq.")


def _envelope(value: bytes) -> events_pb2.Envelope | None:
    env = events_pb2.Envelope()
    try:
        env.ParseFromString(value)
    except Exception:  # malformed: acm.envelopes.decode dead-letters it with the reason
        return None
    return env


class SealingBus:
    """An EventBus that seals on publish and opens on delivery (the one place envelopes are sealed and opened):
    handlers get the record with the body in clear; a record whose key is gone is acknowledged unhandled
    (forgotten). A Forget passing through drops the keyring's cached keys of the forgotten owners."""

    def __init__(self, bus: EventBus, keyring: Keyring) -> None:
        self.inner = bus
        self.keyring = keyring

    async def seal(self, env: events_pb2.Envelope) -> None:
        await seal(env, self.keyring)

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        env = None if _is_dead_letter(topic) else _envelope(value)
        # A signed clear body is a direct publisher's (sealing it would void the signature): it goes as it is. ACM's
        # own signer, the gateway, seals before it signs (seal_before_signing).
        if env is not None and needs_sealing(env) and not env.signature:
            await seal(env, self.keyring)
            value = env.SerializeToString()
        await self.inner.publish(topic, key, value)

    def subscribe(
        self, topic: str, group: str, handler: RecordHandler, *, from_now: bool = False, concurrency: int = 1
    ) -> None:
        opening = wrapped(handler, lambda h: self._opening(group, h))  # a batching handler's batches opened too
        self.inner.subscribe(topic, group, opening, from_now=from_now, concurrency=concurrency)

    def _opening(self, group: str, handler: RecordHandler) -> Callable[[Record], Awaitable[None]]:
        async def opened(record: Record) -> None:
            env = None if _is_dead_letter(record.topic) else _envelope(record.value)
            if env is None:
                await handler(record)
                return
            if env.WhichOneof("body") == "forget_requested":
                prefix = forget_prefix(env.forget_requested.level, env.scope)
                if prefix is not None:
                    self.keyring.forgotten(prefix)
            if not env.sealed:
                await handler(record)  # clear: ACM's unsealed bodies, and direct publishers' turns
                return
            try:
                await open_sealed(env, self.keyring)
            except Forgotten:
                FORGOTTEN_RECORDS.add(1, {"topic": record.topic, "group": group})
                log.info(
                    "group %s: %s@%d/%d event %s skipped: its data key is destroyed (forgotten)",
                    group,
                    record.topic,
                    record.partition,
                    record.offset,
                    env.event_id,
                )
                return
            # The delivery layer keeps the original record: a dead letter holds the sealed bytes, never these.
            await handler(replace(record, value=env.SerializeToString()))

        return opened

    async def start(self) -> None:
        await self.inner.start()

    async def stop(self) -> None:
        await self.inner.stop()

    def __getattr__(self, name: str) -> Any:
        # The wrapped adapter's own extras (health checks, the embedded log's pruning) pass through.
        return getattr(self.inner, name)


# --- the keys, kept by the gateway ---------------------------------------------------------------------------


def new_master_key() -> str:
    """A master key as ACM_MASTER_KEY takes it: 32 random bytes, urlsafe base64."""
    return base64.urlsafe_b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def master_key_bytes(text: str) -> bytes:
    """ACM_MASTER_KEY's bytes; ValueError unless it is 32 bytes in (urlsafe) base64."""
    try:
        raw = base64.urlsafe_b64decode(text.strip().encode())
    except ValueError:
        raise ValueError("the master key must be base64 (acm keys master-key makes one)") from None
    if len(raw) != KEY_BYTES:
        raise ValueError(f"the master key must be {KEY_BYTES} bytes, base64 ({len(raw)} given)")
    return raw


def master_id(master: bytes) -> str:
    """A master key's public id, recorded with each data key it wraps: an HMAC under the key itself (names it,
    reveals nothing of it)."""
    return hmac.new(master, b"acm.master-key-id.v1", hashlib.sha256).hexdigest()[:16]


class MasterKeyMissing(RuntimeError):
    """A data key is wrapped by a master key the gateway is not given: a configuration error (never a
    Forget), so the record waits (retried) instead of being taken as forgotten."""


@dataclass(frozen=True)
class MasterKeys:
    """The master keys the gateway holds: ``current`` wraps every new data key; ``previous`` (while a rotation
    runs: ACM_MASTER_KEY_PREVIOUS, embedded ``master.key.next``) still unwraps the rows not re-wrapped yet."""

    current: bytes
    previous: tuple[bytes, ...] = ()

    @property
    def current_id(self) -> str:
        return master_id(self.current)

    def by_id(self, wanted: str) -> bytes | None:
        return next((m for m in (self.current, *self.previous) if master_id(m) == wanted), None)

    def unwrap(self, stored: StoredKey) -> bytes:
        """The stored key's secret, opened with the master its row names (a row from before master ids: each
        master held, the current first)."""
        if stored.master_id:
            master = self.by_id(stored.master_id)
            if master is None:
                raise MasterKeyMissing(
                    f"data key {stored.key_id} is wrapped by master key {stored.master_id}, which is not configured "
                    f"(current {self.current_id}; a rotation in progress needs ACM_MASTER_KEY_PREVIOUS)"
                )
            return unwrap(master, stored.key_id, stored.owner, stored.wrapped)
        for master in (self.current, *self.previous):
            try:
                return unwrap(master, stored.key_id, stored.owner, stored.wrapped)
            except InvalidTag:
                continue
        raise MasterKeyMissing(f"data key {stored.key_id} opens with none of the master keys configured")

    def wrap(self, key_id: str, owner: Owner, secret: bytes) -> StoredKey:
        return StoredKey(key_id, owner, wrap(self.current, key_id, owner, secret), self.current_id)


def _wrap_aad(key_id: str, owner: Owner) -> bytes:
    # A user's (session-less) key is bound as before keys were per session, so rows from then still unwrap.
    parts = owner if owner[3] else owner[:3]
    return "\x00".join(("acm.data_key.v1", key_id, *parts)).encode()


def wrap(master: bytes, key_id: str, owner: Owner, secret: bytes) -> str:
    """A data key as stored: AES-256-GCM under the master key, bound to its id and owner, base64."""
    nonce = os.urandom(_NONCE)
    return base64.b64encode(nonce + AESGCM(master).encrypt(nonce, secret, _wrap_aad(key_id, owner))).decode()


def unwrap(master: bytes, key_id: str, owner: Owner, wrapped: str) -> bytes:
    raw = base64.b64decode(wrapped)
    return AESGCM(master).decrypt(raw[:_NONCE], raw[_NONCE:], _wrap_aad(key_id, owner))


@dataclass(frozen=True, slots=True)
class StoredKey:
    key_id: str
    owner: Owner
    wrapped: str
    master_id: str = ""  # the master key that wrapped it ("": a row from before master ids)


class DataKeyRepo(Protocol):
    """The gateway's data_keys table (one current key per owner)."""

    async def current(self, owner: Owner) -> StoredKey | None: ...

    async def by_id(self, key_id: str) -> StoredKey | None: ...

    async def add(self, key: StoredKey) -> None:
        """Insert unless the owner has a key already (a concurrent first use: the other one wins)."""

    async def destroy(self, prefix: Owner) -> int:
        """Delete every key of the owners under ``prefix``; how many."""

    async def not_wrapped_by(self, master_id: str, after: str, limit: int) -> list[StoredKey]:
        """Up to ``limit`` keys wrapped by another master than ``master_id`` (or by an unrecorded one), by key
        id after ``after``."""

    async def count_not_wrapped_by(self, master_id: str) -> int: ...

    async def rewrap(self, pairs: Sequence[tuple[StoredKey, StoredKey]]) -> int:
        """For each (old, new): replace ``old``'s wrapping with ``new``'s unless the row changed meanwhile
        (destroyed, or re-wrapped by a concurrent run); how many were replaced."""

    async def purge(self) -> None:
        """What the store must do so replaced and deleted wrappings leave its files (SQLite: a checkpoint)."""


class KeyShredder(Protocol):
    async def destroy(self, prefix: Owner) -> int:
        """A Forget: the keys of every owner under ``prefix`` are deleted; how many."""


class StoreKeyring:
    """Implements Keyring over the gateway's store (the gateway; every service of the embedded process). Keys read
    are kept in memory, dropped by ``destroy`` at once (in one process a Forget counts at once) and, with
    ``ttl_s`` > 0, after that long: another gateway replica may have destroyed them (0: kept until destroyed, the
    embedded process, the only one)."""

    def __init__(
        self,
        repo: DataKeyRepo,
        master: bytes | MasterKeys,
        ttl_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._repo = repo
        self._masters = master if isinstance(master, MasterKeys) else MasterKeys(master)
        self._ttl_s = ttl_s
        self._clock = clock
        self._by_id: dict[str, tuple[float, DataKey]] = {}
        self._current: dict[Owner, tuple[float, DataKey]] = {}

    def _fresh(self, kept: tuple[float, DataKey] | None) -> DataKey | None:
        if kept is None or (self._ttl_s > 0 and kept[0] <= self._clock()):
            return None
        return kept[1]

    def _keep(self, table: dict[Any, tuple[float, DataKey]], at: Any, key: DataKey) -> None:
        if len(table) >= _MAX_KEPT:
            table.clear()
        table[at] = (self._clock() + self._ttl_s, key)

    def _open(self, stored: StoredKey) -> DataKey:
        key = DataKey(stored.key_id, stored.owner, self._masters.unwrap(stored))
        self._keep(self._by_id, key.key_id, key)
        return key

    async def current(self, owner: Owner) -> DataKey:
        kept = self._fresh(self._current.get(owner))
        if kept is not None:
            return kept
        stored = await self._repo.current(owner)
        if stored is None:
            key_id = new_id()
            await self._repo.add(self._masters.wrap(key_id, owner, os.urandom(KEY_BYTES)))
            stored = await self._repo.current(owner)
            if stored is None:  # destroyed between the two statements by a Forget of this very owner
                raise PermanentError("the data key's owner was forgotten while its key was made")
        key = self._open(stored)
        self._keep(self._current, owner, key)
        return key

    async def by_id(self, owner: Owner, key_id: str) -> DataKey | None:
        kept = self._fresh(self._by_id.get(key_id))
        if kept is None:
            stored = await self._repo.by_id(key_id)
            if stored is None:
                return None
            kept = self._open(stored)
        return kept if may_open(kept.owner, owner) else None

    async def destroy(self, prefix: Owner) -> int:
        """A Forget: the keys of every owner under ``prefix`` are deleted; their records cannot be opened."""
        self.forgotten(prefix)
        destroyed = await self._repo.destroy(prefix)
        self.forgotten(prefix)  # and what a concurrent read cached meanwhile
        return destroyed

    def forgotten(self, prefix: Owner) -> None:
        for key_id in [k for k, (_, key) in self._by_id.items() if owned_by(key.owner, prefix)]:
            del self._by_id[key_id]
        for owner in [o for o in self._current if owned_by(o, prefix)]:
            del self._current[owner]


async def seal_before_signing(bus: EventBus, env: events_pb2.Envelope) -> None:
    """For a publisher that signs its envelopes (the gateway): seal ``env`` now when ``bus`` seals, so the
    signature covers the sealed bytes that are sent."""
    if isinstance(bus, SealingBus):
        await bus.seal(env)


def keyring_of(bus: EventBus) -> Keyring | None:
    """The data keys ``bus`` seals with (None: it does not seal): the keys the gateway gives direct publishers."""
    return bus.keyring if isinstance(bus, SealingBus) else None


def shredder_of(bus: EventBus) -> KeyShredder | None:
    """The data keys a Forget destroys: the gateway's store keyring behind its sealing bus (None: not sealing)."""
    if isinstance(bus, SealingBus) and isinstance(bus.keyring, StoreKeyring):
        return bus.keyring
    return None


def forget_owners(level: ForgetLevel, scope: Scope) -> Owner | None:
    """The owners whose data keys a Forget of ``level`` destroys (a prefix, see owned_by): a session's key; every
    key of a user (each session's and the user's own), of a customer, of a client. None: a session Forget that
    names no session."""
    if level is ForgetLevel.SESSION:
        return (scope.client_id, scope.customer_id, scope.user_id, scope.session_id) if scope.session_id else None
    if level is ForgetLevel.USER:
        return scope.client_id, scope.customer_id, scope.user_id, ""
    if level is ForgetLevel.CUSTOMER:
        return scope.client_id, scope.customer_id, "", ""
    return scope.client_id, "", "", ""


MASTER_KEY_FILE = "master.key"
# The embedded rotation's new master key, until every data key is wrapped by it (then it becomes master.key).
NEXT_MASTER_KEY_FILE = "master.key.next"


def _new_key_file(path: Path) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(new_master_key() + "\n")
        out.flush()
        os.fsync(out.fileno())


def embedded_master_key(data_dir: Path) -> bytes:
    """The embedded process's master key: made once and kept (owner-only) in its data folder. A destroyed data
    key is gone from the folder's files (SQLite secure_delete and a checkpoint), so the master key beside them
    opens nothing forgotten; it guards the live keys no more than the folder's permissions do."""
    path = data_dir / MASTER_KEY_FILE
    if not path.exists():
        _new_key_file(path)
    return master_key_bytes(path.read_text())


def embedded_master_keys(data_dir: Path) -> MasterKeys:
    """The embedded process's master keys: ``master.key``, and an interrupted rotation's ``master.key.next``
    (some data keys may be wrapped by it already)."""
    current = embedded_master_key(data_dir)
    nxt = data_dir / NEXT_MASTER_KEY_FILE
    return MasterKeys(current, (master_key_bytes(nxt.read_text()),) if nxt.exists() else ())


@dataclass(frozen=True, slots=True)
class Rotation:
    rewrapped: int  # data keys this run re-wrapped
    left: int  # data keys still wrapped by another master (made meanwhile by a gateway on the old one)


async def rotate_master(
    repo: DataKeyRepo,
    masters: MasterKeys,
    batch: int = 500,
    progress: Callable[[int, int], None] | None = None,
) -> Rotation:
    """Re-wrap every data key not yet wrapped by ``masters.current`` (unwrapped with the master its row names,
    one of ``masters``): resumable (a run takes the rows still on another master) and idempotent (a row is
    replaced only as it was read, so a concurrent run or a Forget in between wins). ``progress(done, total)``
    after each batch. The data keys' secrets are unchanged: records on the bus open as before."""
    target = masters.current_id
    total = await repo.count_not_wrapped_by(target)
    done, after = 0, ""
    while True:
        rows = await repo.not_wrapped_by(target, after, batch)
        if not rows:
            break
        done += await repo.rewrap([(k, masters.wrap(k.key_id, k.owner, masters.unwrap(k))) for k in rows])
        after = rows[-1].key_id
        if progress is not None:
            progress(done, total)
    await repo.purge()  # SQLite: the old wrappings out of the file's free pages and its WAL
    return Rotation(done, await repo.count_not_wrapped_by(target))


async def rotate_embedded_master(
    data_dir: Path, repo: DataKeyRepo, batch: int = 500, progress: Callable[[int, int], None] | None = None
) -> Rotation:
    """The embedded rotation (``acm serve`` stopped): a new master key made as ``master.key.next`` (an interrupted
    run's reused), every data key re-wrapped by it, then written over ``master.key`` in place (same length) and
    the ``.next`` file removed. Interrupted anywhere, ``embedded_master_keys`` holds both keys and a new run
    goes on."""
    path, nxt = data_dir / MASTER_KEY_FILE, data_dir / NEXT_MASTER_KEY_FILE
    old = embedded_master_key(data_dir)
    if not nxt.exists():
        _new_key_file(nxt)
    text = nxt.read_text()
    new = master_key_bytes(text)
    result = await rotate_master(repo, MasterKeys(new, (old,)), batch, progress)
    if result.left:
        return result  # rows on a master neither file holds: keep both files, the caller reports it
    # Over the old file's own bytes (the same length: one write), so its old key does not stay in a free block.
    fd = os.open(path, os.O_WRONLY)
    try:
        os.pwrite(fd, text.encode(), 0)
        os.ftruncate(fd, len(text.encode()))
        os.fsync(fd)
    finally:
        os.close(fd)
    nxt.unlink()
    return result


def master_keys(current: str, previous: Sequence[str] = ()) -> MasterKeys:
    """ACM_MASTER_KEY and ACM_MASTER_KEY_PREVIOUS's keys (ValueError naming the setting: one is not a valid key;
    the message never holds the value)."""
    try:
        now = master_key_bytes(current)
    except ValueError as exc:
        raise ValueError(f"ACM_MASTER_KEY is not valid: {exc}") from None
    try:
        return MasterKeys(now, tuple(master_key_bytes(p) for p in previous if p.strip()))
    except ValueError as exc:
        raise ValueError(f"ACM_MASTER_KEY_PREVIOUS is not valid: {exc}") from None


async def readable_bytes(value: bytes, keyring: Keyring, topic: str = "") -> bytes:
    """What of a bus record anyone holding ``keyring``'s keys can read in clear: a sealed body opened with the
    keys that remain (b"" when its key is gone or it does not open), a dead letter's record the same way (its
    ``topic`` has ``acm.dlq.`` in it); the record itself otherwise. For residue scans (acm bench safety): a
    forgotten subject's text must be in neither."""
    if "acm.dlq." in topic:
        letter = events_pb2.DeadLetter()
        try:
            letter.ParseFromString(value)
        except Exception:
            return value
        return await readable_bytes(letter.value, keyring)
    env = _envelope(value)
    if env is None or not env.sealed:
        return value
    try:
        await open_sealed(env, keyring)
    except (Forgotten, PermanentError):
        return b""
    body = env.WhichOneof("body")
    return getattr(env, body).SerializeToString() if body else b""
