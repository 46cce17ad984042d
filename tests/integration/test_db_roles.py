"""`acm db roles` on the real Postgres: each service runs under its own role, in its own schema, and cannot
read another service's tables."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql

from acm.bootstrap import open_relational
from acm.domain.scope import Scope
from acm.ownership import SERVICES
from acm_cli.db_roles import create_roles, service_url

pytestmark = pytest.mark.infra
ALICE = Scope("c1", "acme", "alice")


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
