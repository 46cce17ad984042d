"""Crypto-shredding of the bus (acm.sealing): seal and open, what breaks an open (a wrong key, altered routing
fields, a destroyed key), the signature over what is sent, and the sealing bus around a consumer."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable

import pytest
from cryptography.exceptions import InvalidTag

from acm.domain.scope import ForgetLevel, Scope
from acm.envelopes import decode, envelope, key_hash, sign, signature_valid
from acm.ports.bus import PermanentError, Record, RecordHandler
from acm.sealing import (
    DataKey,
    Forgotten,
    Owner,
    SealingBus,
    StoredKey,
    StoreKeyring,
    forget_owners,
    key_owner,
    master_key_bytes,
    new_master_key,
    open_sealed,
    open_with,
    owned_by,
    readable_bytes,
    seal,
    seal_with,
    unwrap,
    wrap,
)
from acm.v1 import common_pb2, events_pb2

SECRET_TEXT = "my locker code is by the qbarisunmo fountain"
ALICE = Scope("c1", "acme", "alice", "support", "s1")


def turn_env(scope: Scope = ALICE, text: str = SECRET_TEXT) -> events_pb2.Envelope:
    env = envelope(scope)
    env.turn_received.job_id = "job-1"
    env.turn_received.turn.content = text
    return env


def key(owner: Owner = ("c1", "acme", "alice")) -> DataKey:
    return DataKey("k-" + os.urandom(4).hex(), owner, os.urandom(32))


class MemoryKeyRepo:
    """The data_keys table as a dict (the SQL one has its integration test)."""

    def __init__(self) -> None:
        self.rows: dict[str, StoredKey] = {}

    async def current(self, owner: Owner) -> StoredKey | None:
        return next((k for k in self.rows.values() if k.owner == owner), None)

    async def by_id(self, key_id: str) -> StoredKey | None:
        return self.rows.get(key_id)

    async def add(self, stored: StoredKey) -> None:
        if await self.current(stored.owner) is None:
            self.rows[stored.key_id] = stored

    async def destroy(self, prefix: Owner) -> int:
        gone = [k for k, row in self.rows.items() if owned_by(row.owner, prefix)]
        for k in gone:
            del self.rows[k]
        return len(gone)


def keyring() -> StoreKeyring:
    return StoreKeyring(MemoryKeyRepo(), master_key_bytes(new_master_key()))


def test_a_sealed_body_holds_no_clear_text_and_opens_back() -> None:
    env, k = turn_env(), key()
    seal_with(env, k)
    sent = env.SerializeToString()
    assert SECRET_TEXT.encode() not in sent and b"qbarisunmo" not in sent
    assert env.WhichOneof("body") is None and env.data_key_id == k.key_id
    got = events_pb2.Envelope.FromString(sent)
    open_with(got, k)
    assert got.turn_received.turn.content == SECRET_TEXT
    assert got.event_id == env.event_id  # routing fields stay in clear
    _, scope = decode(got.SerializeToString(), "turn_received")
    assert scope == ALICE


def test_a_wrong_key_does_not_open() -> None:
    env, k = turn_env(), key()
    seal_with(env, k)
    with pytest.raises(PermanentError, match="does not open"):
        open_with(env, DataKey(k.key_id, k.owner, os.urandom(32)))


@pytest.mark.parametrize(
    "alter",
    [
        lambda e: setattr(e, "event_id", "another-event"),
        lambda e: setattr(e.scope, "user_id", "mallory"),
        lambda e: setattr(e, "data_key_id", "k-other"),
        lambda e: setattr(e, "sealed", e.sealed[:-1] + bytes([e.sealed[-1] ^ 1])),
    ],
    ids=["event_id", "scope", "key id", "ciphertext"],
)
def test_altered_routing_fields_or_bytes_do_not_open(alter: Callable[[events_pb2.Envelope], None]) -> None:
    env, k = turn_env(), key()
    seal_with(env, k)
    alter(env)
    with pytest.raises(PermanentError):
        open_with(env, k)


async def test_a_destroyed_key_makes_the_record_forgotten() -> None:
    ring = keyring()
    env = turn_env()
    await seal(env, ring)
    sent = env.SerializeToString()
    assert await readable_bytes(sent, ring) != b""  # opens while the key lives
    assert await ring.destroy(("c1", "acme", "alice")) == 1
    got = events_pb2.Envelope.FromString(sent)
    with pytest.raises(Forgotten):
        await open_sealed(got, ring)
    assert await readable_bytes(sent, ring) == b""
    # A new key after the Forget: new events open, the old ones stay shut.
    fresh = turn_env()
    await seal(fresh, ring)
    assert fresh.data_key_id != env.data_key_id
    await open_sealed(fresh, ring)


async def test_a_key_of_another_owner_is_never_used_to_open() -> None:
    ring = keyring()
    env = turn_env()
    await seal(env, ring)
    env.scope.user_id = "bob"  # claims bob's scope with alice's key id
    with pytest.raises(Forgotten):
        await open_sealed(env, ring)


def test_the_signature_covers_the_sealed_bytes_and_still_checks_once_opened() -> None:
    env, k, hashed = turn_env(), key(), key_hash("acm_k1_secret")
    seal_with(env, k)
    sign(env, "k1", hashed)
    sent = events_pb2.Envelope.FromString(env.SerializeToString())
    assert signature_valid(sent, hashed)
    open_with(sent, k)
    assert signature_valid(sent, hashed)  # opened on delivery: the handler still verifies it
    sent.sealed = sent.sealed + b"x"
    assert not signature_valid(sent, hashed)


def test_a_clear_direct_publisher_turn_is_signed_as_before() -> None:
    env, hashed = turn_env(), key_hash("acm_k1_secret")
    sign(env, "k1", hashed)
    assert signature_valid(events_pb2.Envelope.FromString(env.SerializeToString()), hashed)


def test_wrapped_keys_open_only_with_their_master_and_owner() -> None:
    master, secret = master_key_bytes(new_master_key()), os.urandom(32)
    wrapped = wrap(master, "k1", ("c1", "acme", "alice"), secret)
    assert unwrap(master, "k1", ("c1", "acme", "alice"), wrapped) == secret
    with pytest.raises(InvalidTag):
        unwrap(master_key_bytes(new_master_key()), "k1", ("c1", "acme", "alice"), wrapped)
    with pytest.raises(InvalidTag):
        unwrap(master, "k1", ("c1", "acme", "bob"), wrapped)
    with pytest.raises(ValueError, match="32 bytes"):
        master_key_bytes("c2hvcnQ=")


def test_which_keys_each_forget_level_destroys() -> None:
    alice, bob_other = ("c1", "acme", "alice"), ("c1", "globex", "bob")
    customer_key, client_key = ("c1", "acme", ""), ("c1", "", "")
    user = forget_owners(ForgetLevel.USER, ALICE)
    customer = forget_owners(ForgetLevel.CUSTOMER, ALICE)
    client = forget_owners(ForgetLevel.CLIENT, ALICE)
    assert user is not None and customer is not None and client is not None
    assert [owned_by(o, user) for o in (alice, customer_key, client_key, bob_other)] == [True, False, False, False]
    assert [owned_by(o, customer) for o in (alice, customer_key, client_key, bob_other)] == [True, True, False, False]
    assert [owned_by(o, client) for o in (alice, customer_key, client_key, bob_other)] == [True, True, True, True]
    assert not owned_by(("c2", "acme", "alice"), client)
    assert forget_owners(ForgetLevel.SESSION, ALICE) is None
    # Every scope ACM publishes names a user: its events, customer-tier statements included, are the user's.
    assert key_owner(envelope(ALICE).scope) == alice
    assert key_owner(common_pb2.Scope(client_id="c1", customer_id="acme")) == customer_key


class ListBus:
    """An in-memory EventBus: publish appends, deliver() hands every record to the subscribers (unit tests of
    the wrapper only; the real buses have their integration tests)."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.handlers: list[tuple[str, RecordHandler]] = []

    async def publish(self, topic: str, key: str, value: bytes) -> None:
        self.records.append(Record(topic, key, value, offset=len(self.records)))

    def subscribe(
        self, topic: str, group: str, handler: RecordHandler, *, from_now: bool = False, concurrency: int = 1
    ) -> None:
        self.handlers.append((topic, handler))

    async def deliver(self) -> None:
        for record in self.records:
            for topic, handler in self.handlers:
                if topic == record.topic:
                    await handler(record)

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


async def test_the_sealing_bus_seals_on_publish_opens_on_delivery_and_skips_the_forgotten() -> None:
    inner, ring = ListBus(), keyring()
    bus = SealingBus(inner, ring)
    got: list[str] = []

    async def handler(record: Record) -> None:
        env, _ = decode(record.value, "turn_received")
        got.append(env.turn_received.turn.content)

    bus.subscribe("acm.turns.v1", "g", handler)
    await bus.publish("acm.turns.v1", "k", turn_env().SerializeToString())
    assert SECRET_TEXT.encode() not in inner.records[0].value
    await inner.deliver()
    assert got == [SECRET_TEXT]
    await ring.destroy(("c1", "acme", "alice"))
    await inner.deliver()  # the same record again: its key is gone, the handler never sees it
    assert got == [SECRET_TEXT]


async def test_the_sealing_bus_passes_a_signed_clear_body_as_a_direct_publisher_sent_it() -> None:
    inner = ListBus()
    bus = SealingBus(inner, keyring())
    env = turn_env()
    sign(env, "k1", key_hash("s"))
    await bus.publish("acm.turns.v1", "k", env.SerializeToString())
    assert inner.records[0].value == env.SerializeToString()  # sealing it would void its signature


async def test_unsealed_kinds_and_dead_letters_pass_as_they_are() -> None:
    inner = ListBus()
    bus = SealingBus(inner, keyring())
    forget = envelope(ALICE)
    forget.forget_requested.level = events_pb2.FORGET_LEVEL_USER
    await bus.publish("acm.forget.v1", "k", forget.SerializeToString())
    await bus.publish("acm.dlq.g.v1", "k", b"\x00not an envelope")
    assert [r.value for r in inner.records] == [forget.SerializeToString(), b"\x00not an envelope"]


class CountingRing(StoreKeyring):
    def __init__(self) -> None:
        super().__init__(MemoryKeyRepo(), master_key_bytes(new_master_key()))
        self.dropped: list[Owner] = []

    def forgotten(self, prefix: Owner) -> None:
        self.dropped.append(prefix)
        super().forgotten(prefix)


async def test_a_forget_on_the_bus_drops_the_cached_keys_of_its_owners() -> None:
    inner, ring = ListBus(), CountingRing()
    bus = SealingBus(inner, ring)
    seen: list[bytes] = []

    async def handler(record: Record) -> Awaitable[None] | None:
        seen.append(record.value)
        return None

    bus.subscribe("acm.forget.v1", "g", handler)  # type: ignore[arg-type]
    forget = envelope(ALICE)
    forget.forget_requested.level = events_pb2.FORGET_LEVEL_CUSTOMER
    await bus.publish("acm.forget.v1", "k", forget.SerializeToString())
    await inner.deliver()
    assert ring.dropped == [("c1", "acme", "")] and len(seen) == 1


async def test_a_gateway_replica_sees_another_replicas_forget_within_its_ttl() -> None:
    now = [0.0]
    repo, master = MemoryKeyRepo(), master_key_bytes(new_master_key())
    this, other = StoreKeyring(repo, master, ttl_s=1.0, clock=lambda: now[0]), StoreKeyring(repo, master)
    made = await this.current(("c1", "acme", "alice"))
    await other.destroy(("c1", "acme", "alice"))  # the Forget ran on the other replica
    assert await this.current(("c1", "acme", "alice")) == made  # kept, within the TTL
    now[0] = 1.5
    assert (await this.current(("c1", "acme", "alice"))).key_id != made.key_id
    assert await this.by_id(("c1", "acme", "alice"), made.key_id) is None
