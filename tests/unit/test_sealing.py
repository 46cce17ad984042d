"""Crypto-shredding of the bus (acm.sealing): seal and open, what breaks an open (a wrong key, altered routing
fields, a destroyed key), the signature over what is sent, and the sealing bus around a consumer."""

from __future__ import annotations

import base64
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from acm.domain.scope import ForgetLevel, Scope
from acm.envelopes import decode, envelope, key_hash, sign, signature_valid
from acm.ports.bus import PermanentError, Record, RecordHandler
from acm.sealing import (
    MASTER_KEY_FILE,
    NEXT_MASTER_KEY_FILE,
    DataKey,
    Forgotten,
    MasterKeyMissing,
    MasterKeys,
    Owner,
    Rotation,
    SealingBus,
    StoredKey,
    StoreKeyring,
    embedded_master_key,
    embedded_master_keys,
    forget_owners,
    forget_prefix,
    key_owner,
    master_id,
    master_key_bytes,
    master_keys,
    new_master_key,
    open_sealed,
    open_with,
    owned_by,
    readable_bytes,
    rotate_embedded_master,
    rotate_master,
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


ALICE_S1: Owner = ("c1", "acme", "alice", "s1")  # ALICE's session: the key her events are sealed with
ALICE_USER: Owner = ("c1", "acme", "alice", "")  # her own key, and the prefix a user Forget destroys


def key(owner: Owner = ALICE_S1) -> DataKey:
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

    async def not_wrapped_by(self, master_id: str, after: str, limit: int) -> list[StoredKey]:
        return sorted(
            (r for r in self.rows.values() if r.master_id != master_id and r.key_id > after), key=lambda r: r.key_id
        )[:limit]

    async def count_not_wrapped_by(self, master_id: str) -> int:
        return len(await self.not_wrapped_by(master_id, "", len(self.rows)))

    async def rewrap(self, pairs: Sequence[tuple[StoredKey, StoredKey]]) -> int:
        done = 0
        for old, new in pairs:
            if self.rows.get(old.key_id) == old:
                self.rows[old.key_id] = new
                done += 1
        return done

    async def purge(self) -> None: ...


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
    assert await ring.destroy(ALICE_USER) == 1
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
    wrapped = wrap(master, "k1", ALICE_S1, secret)
    assert unwrap(master, "k1", ALICE_S1, wrapped) == secret
    with pytest.raises(InvalidTag):
        unwrap(master_key_bytes(new_master_key()), "k1", ALICE_S1, wrapped)
    with pytest.raises(InvalidTag):
        unwrap(master, "k1", ("c1", "acme", "bob", "s1"), wrapped)
    with pytest.raises(InvalidTag):
        unwrap(master, "k1", ALICE_USER, wrapped)  # her session's key is not her own
    with pytest.raises(ValueError, match="32 bytes"):
        master_key_bytes("c2hvcnQ=")


def test_which_keys_each_forget_level_destroys() -> None:
    alice_s2, bob_other = ("c1", "acme", "alice", "s2"), ("c1", "globex", "bob", "s1")
    customer_key, client_key = ("c1", "acme", "", ""), ("c1", "", "", "")
    keys = (ALICE_S1, alice_s2, ALICE_USER, customer_key, client_key, bob_other)
    session = forget_owners(ForgetLevel.SESSION, ALICE)
    user = forget_owners(ForgetLevel.USER, ALICE)
    customer = forget_owners(ForgetLevel.CUSTOMER, ALICE)
    client = forget_owners(ForgetLevel.CLIENT, ALICE)
    assert session is not None and user is not None and customer is not None and client is not None
    assert [owned_by(o, session) for o in keys] == [True, False, False, False, False, False]
    assert [owned_by(o, user) for o in keys] == [True, True, True, False, False, False]
    assert [owned_by(o, customer) for o in keys] == [True, True, True, True, False, False]
    assert [owned_by(o, client) for o in keys] == [True] * 6
    assert not owned_by(("c2", "acme", "alice", "s1"), client)
    assert forget_owners(ForgetLevel.SESSION, Scope("c1", "acme", "alice")) is None  # names no session
    # A session's events (customer-tier statements made in it included) are sealed with the session's key.
    assert key_owner(envelope(ALICE).scope) == ALICE_S1
    assert key_owner(envelope(Scope("c1", "acme", "alice")).scope) == ALICE_USER
    assert key_owner(common_pb2.Scope(client_id="c1", customer_id="acme")) == customer_key
    # The bus's Forget events name the same prefixes (each service drops its cached keys by them).
    for level, pb_level in (
        (ForgetLevel.SESSION, events_pb2.FORGET_LEVEL_SESSION),
        (ForgetLevel.USER, events_pb2.FORGET_LEVEL_USER),
        (ForgetLevel.CLIENT, events_pb2.FORGET_LEVEL_CLIENT),
    ):
        assert forget_prefix(pb_level, envelope(ALICE).scope) == forget_owners(level, ALICE)


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
    await ring.destroy(ALICE_S1)  # a session Forget
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
    assert ring.dropped == [("c1", "acme", "", "")] and len(seen) == 1


async def test_a_gateway_replica_sees_another_replicas_forget_within_its_ttl() -> None:
    now = [0.0]
    repo, master = MemoryKeyRepo(), master_key_bytes(new_master_key())
    this, other = StoreKeyring(repo, master, ttl_s=1.0, clock=lambda: now[0]), StoreKeyring(repo, master)
    made = await this.current(ALICE_S1)
    await other.destroy(ALICE_USER)  # the Forget ran on the other replica
    assert await this.current(ALICE_S1) == made  # kept, within the TTL
    now[0] = 1.5
    assert (await this.current(ALICE_S1)).key_id != made.key_id
    assert await this.by_id(ALICE_S1, made.key_id) is None


async def test_each_session_has_its_key_and_a_session_forget_shreds_only_that_session() -> None:
    ring = keyring()
    s1, s2 = turn_env(ALICE, "said in s1"), turn_env(Scope("c1", "acme", "alice", "support", "s2"), "said in s2")
    for env in (s1, s2):
        await seal(env, ring)
    assert s1.data_key_id != s2.data_key_id
    assert await ring.destroy(ALICE_S1) == 1  # a session Forget
    assert await readable_bytes(s1.SerializeToString(), ring) == b""
    assert b"said in s2" in await readable_bytes(s2.SerializeToString(), ring)  # her other session still opens
    assert await ring.destroy(ALICE_USER) == 1  # a user Forget: every session's key of hers
    assert await readable_bytes(s2.SerializeToString(), ring) == b""


async def test_a_record_sealed_with_the_users_key_before_keys_were_per_session_still_opens() -> None:
    repo, master = MemoryKeyRepo(), master_key_bytes(new_master_key())
    ring = StoreKeyring(repo, master)
    # A row as the releases before wrote it: the user's key, wrapped bound to (key id, client, customer, user).
    secret, nonce = os.urandom(32), os.urandom(12)
    aad = "\x00".join(("acm.data_key.v1", "k-old", "c1", "acme", "alice")).encode()
    old = base64.b64encode(nonce + AESGCM(master).encrypt(nonce, secret, aad)).decode()
    repo.rows["k-old"] = StoredKey("k-old", ALICE_USER, old)
    env = turn_env()
    seal_with(env, DataKey("k-old", ALICE_USER, secret))
    await open_sealed(env, ring)  # her session's record names her user key: it opens
    assert env.turn_received.turn.content == SECRET_TEXT
    other = turn_env()
    seal_with(other, DataKey("k-old", ALICE_USER, secret))
    other.scope.user_id = "bob"  # never another user's record
    with pytest.raises(Forgotten):
        await open_sealed(other, ring)
    again = turn_env()
    seal_with(again, DataKey("k-old", ALICE_USER, secret))
    await ring.destroy(ALICE_USER)  # a user Forget destroys her old key too
    with pytest.raises(Forgotten):
        await open_sealed(again, ring)


async def test_rotating_the_master_rewraps_every_key_resumably_and_the_old_master_opens_none() -> None:
    repo = MemoryKeyRepo()
    old, new = master_key_bytes(new_master_key()), master_key_bytes(new_master_key())
    ring = StoreKeyring(repo, old)
    sealed = []
    for user in ("alice", "bob", "carol", "dan", "erin"):
        env = turn_env(Scope("c1", "acme", user, "support", "s1"))
        await seal(env, ring)
        sealed.append(env.SerializeToString())
    assert {r.master_id for r in repo.rows.values()} == {master_id(old)}

    class Interrupted(Exception): ...

    def stop_after_first_batch(done: int, total: int) -> None:
        raise Interrupted(done, total)

    both = MasterKeys(new, (old,))
    with pytest.raises(Interrupted):
        await rotate_master(repo, both, batch=2, progress=stop_after_first_batch)
    assert sum(r.master_id == master_id(new) for r in repo.rows.values()) == 2
    during = StoreKeyring(repo, both)  # a gateway while it runs: both masters
    assert all([await readable_bytes(v, during) != b"" for v in sealed])
    seen: list[tuple[int, int]] = []
    assert await rotate_master(repo, both, batch=2, progress=lambda d, t: seen.append((d, t))) == Rotation(3, 0)
    assert seen == [(2, 3), (3, 3)]
    assert await rotate_master(repo, both) == Rotation(0, 0)  # idempotent
    after = StoreKeyring(repo, new)
    assert all([SECRET_TEXT.encode() in await readable_bytes(v, after) for v in sealed])  # sealed before: open
    for stored in repo.rows.values():
        with pytest.raises(InvalidTag):
            unwrap(old, stored.key_id, stored.owner, stored.wrapped)
    with pytest.raises(MasterKeyMissing):
        await StoreKeyring(repo, old).by_id(("c1", "acme", "alice", "s1"), next(iter(repo.rows)))


async def test_a_row_from_before_master_ids_is_opened_and_rotated() -> None:
    repo, old, new = MemoryKeyRepo(), master_key_bytes(new_master_key()), master_key_bytes(new_master_key())
    secret = os.urandom(32)
    repo.rows["k1"] = StoredKey("k1", ALICE_S1, wrap(old, "k1", ALICE_S1, secret))  # no master_id
    assert (await StoreKeyring(repo, MasterKeys(new, (old,))).by_id(ALICE_S1, "k1")) == DataKey("k1", ALICE_S1, secret)
    assert await rotate_master(repo, MasterKeys(new, (old,))) == Rotation(1, 0)
    assert repo.rows["k1"].master_id == master_id(new)
    with pytest.raises(MasterKeyMissing):
        await StoreKeyring(repo, old).by_id(ALICE_S1, "k1")


async def test_the_embedded_rotation_replaces_master_key_and_survives_an_interruption(tmp_path: Path) -> None:
    repo = MemoryKeyRepo()
    old = embedded_master_key(tmp_path)
    ring = StoreKeyring(repo, embedded_master_keys(tmp_path))
    env = turn_env()
    await seal(env, ring)
    await ring.current(("c1", "acme", "bob", "s1"))

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        await rotate_embedded_master(tmp_path, repo, batch=1, progress=interrupt)
    assert (tmp_path / NEXT_MASTER_KEY_FILE).exists() and embedded_master_key(tmp_path) == old
    mid = embedded_master_keys(tmp_path)  # a restart in between opens both halves
    assert SECRET_TEXT.encode() in await readable_bytes(env.SerializeToString(), StoreKeyring(repo, mid))
    assert await rotate_embedded_master(tmp_path, repo) == Rotation(1, 0)
    assert not (tmp_path / NEXT_MASTER_KEY_FILE).exists()
    new = embedded_master_key(tmp_path)
    assert new != old and embedded_master_keys(tmp_path) == MasterKeys(new)
    assert (tmp_path / MASTER_KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert SECRET_TEXT.encode() in await readable_bytes(env.SerializeToString(), StoreKeyring(repo, new))
    assert {r.master_id for r in repo.rows.values()} == {master_id(new)}


def test_master_key_settings_name_the_setting_never_the_value() -> None:
    good = new_master_key()
    assert master_keys(good, ["", good]).previous == (master_key_bytes(good),)
    with pytest.raises(ValueError, match="ACM_MASTER_KEY_PREVIOUS is not valid") as info:
        master_keys(good, ["c2hvcnQ="])
    assert "c2hvcnQ" not in str(info.value)


def test_rotate_master_without_the_keys_says_which_setting_and_changes_nothing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from acm_cli.main import EXIT_USAGE, main

    monkeypatch.delenv("ACM_MASTER_KEY", raising=False)
    argv = ["keys", "rotate-master", "--database-url", "postgresql://nobody@127.0.0.1:9/none"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)  # refused before the database is opened
    assert exit_.value.code == EXIT_USAGE
    assert "set the new key as ACM_MASTER_KEY" in " ".join(capsys.readouterr().err.split())
    with pytest.raises(SystemExit) as exit_:
        main(["keys", "rotate-master", "--data-dir", str(tmp_path)])  # no embedded ACM there
    assert exit_.value.code == EXIT_USAGE and not (tmp_path / MASTER_KEY_FILE).exists()
