"""`acm db roles` on the real Postgres: each service runs under its own role, in its own schema, and cannot
read another service's tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime

import psycopg
import pytest
from psycopg import sql

from acm.auth import create_api_key, key_hash
from acm.bootstrap import open_relational
from acm.domain.models import Layer, Memory, Tier
from acm.domain.schema import default_schema
from acm.domain.scope import Scope
from acm.ownership import SERVICES
from acm_cli.db_roles import create_roles, service_url

pytestmark = pytest.mark.infra
ALICE = Scope("c1", "acme", "alice")
T0 = datetime(2026, 3, 1, tzinfo=UTC)


@pytest.fixture
def database(postgres_dsn: str) -> Iterator[tuple[str, str]]:
    """A throwaway database and a prefix for its roles (roles are global to the server)."""
    tag = uuid.uuid4().hex[:8]
    name, prefix = f"acm_roles_{tag}", f"t{tag}_"
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    base, _, _ = postgres_dsn.rpartition("/")
    yield f"{base}/{name}", prefix
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        for service in SERVICES:
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(f"{prefix}{service}")))


async def test_each_service_reaches_its_own_schema_only(database: tuple[str, str]) -> None:
    admin, prefix = database
    passwords = {s: f"pw-{s}-{uuid.uuid4().hex[:6]}" for s in SERVICES}
    urls = await create_roles(admin, passwords, role_prefix=prefix)
    assert urls["gateway"] == service_url(admin, f"{prefix}gateway")  # no password in what is printed
    again = await create_roles(admin, passwords, role_prefix=prefix)  # idempotent
    assert again == urls

    # Every service starts under its own role: its migrations run in its own schema.
    stores = {s: await open_relational(service_url(admin, f"{prefix}{s}", passwords[s]), service=s) for s in SERVICES}
    try:
        await stores["ingest"].audit.record("c1", "forget", "by ingest")
        await stores["gateway"].audit.record("c1", "forget", "by gateway")
        assert [e.detail for e in await stores["ingest"].audit.list(ALICE)] == ["by ingest"]
    finally:
        for rel in stores.values():
            await rel.close()

    gateway = service_url(admin, f"{prefix}gateway", passwords["gateway"])
    with psycopg.connect(gateway, autocommit=True) as conn:
        conn.execute("SELECT count(*) FROM acm_gateway.audit_log")  # its own: allowed
        for table in ("acm_ingest.memories", "acm_ingest.audit_log", "acm_architect.agent_schemas"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
                conn.execute(sql.SQL("SELECT * FROM {}").format(sql.Identifier(*table.split("."))))
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="permission denied"):
            conn.execute("CREATE TABLE public.sneaky (id integer)")


def test_the_command_takes_each_password_from_its_variable(
    database: tuple[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from acm_cli.main import main

    admin, prefix = database
    argv = ["db", "roles", "--admin-url", admin, "--services", "anticipate", "--password-env", "T_PW_{SERVICE}"]
    argv += ["--role-prefix", prefix]
    with pytest.raises(SystemExit) as refused:  # no password: nothing is made
        main(argv)
    assert refused.value.code == 2 and "set T_PW_ANTICIPATE" in capsys.readouterr().err
    monkeypatch.setenv("T_PW_ANTICIPATE", "secret-pw")
    main(argv)
    out = capsys.readouterr().out
    assert out == f"anticipate: ACM_DATABASE_URL={service_url(admin, f'{prefix}anticipate')}\n"
    assert "secret-pw" not in out
    with psycopg.connect(service_url(admin, f"{prefix}anticipate", "secret-pw")) as conn:
        assert conn.execute("SHOW search_path").fetchone() == ("acm_anticipate",)


async def test_a_database_from_before_moves_each_table_to_its_owner(database: tuple[str, str]) -> None:
    admin, prefix = database
    old = await open_relational(admin)  # the layout before: every table in public
    try:
        memory = Memory("m1", ALICE.owner(Tier.USER), "Alice wants a refund", Layer.LONG, "fact", ("t1",), T0)
        await old.memories.upsert([memory])
        _, secret = await create_api_key(old.api_keys, "c1", "old key")
        await old.schemas.put("c1", default_schema("helpdesk"))
        await old.audit.record("c1", "forget.requested", "before")
    finally:
        await old.close()
    passwords = {s: f"pw-{s}" for s in SERVICES}
    await create_roles(admin, passwords, role_prefix=prefix, move_public=True)
    stores = {s: await open_relational(service_url(admin, f"{prefix}{s}", passwords[s]), service=s) for s in SERVICES}
    try:
        for owner in ("ingest", "retrieve"):  # the write model moved, the read model copied (FTS included)
            found = await stores[owner].memories.keyword_search(ALICE, "refund", 5)
            assert [f.memory.memory_id for f in found] == ["m1"], owner
        assert await stores["gateway"].api_keys.by_hash(key_hash(secret)) is not None
        assert [e.detail for e in await stores["gateway"].audit.list(ALICE)] == ["before"]
        assert await stores["architect"].schemas.latest(ALICE, "helpdesk") is not None
        await stores["ingest"].memories.upsert([replace(memory, memory_id="m2", text="Alice asked again")])  # its own
    finally:
        for rel in stores.values():
            await rel.close()
    with psycopg.connect(admin) as conn:
        left = conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()
    assert {t for (t,) in left} <= {"schema_migrations", "schema_versions"}  # only the old bookkeeping stays
