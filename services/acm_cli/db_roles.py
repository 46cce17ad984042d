"""`acm db roles`: one Postgres role and schema per service (acm.ownership), so that a service can reach only
its own tables.

Run once per database, as a role that may create roles (the database's owner or a superuser), before the
services first start on their own URLs, and again after adding a service or rotating passwords (it is
idempotent). For each service: role ``acm_<service>`` (LOGIN, the password from an environment variable,
search_path its schema), schema ``acm_<service>`` owned by it (tables already there too, so its migrations
can alter them), CONNECT on the database; nobody else has any right on that schema, and PUBLIC loses its
rights on the database and on the ``public`` schema (where the layout before per-service schemas kept every
table). Then each service runs with ``ACM_DATABASE_URL=postgresql://acm_<service>:…@host/db``
(docs/operations.md, "Each service its own store"). A database from before, with every table in ``public``:
``--move-public`` moves each table to its owner's schema first.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlparse, urlunparse

from acm.ownership import SERVICES, schema_of
from acm_cli.admin_options import admin_command, env_option
from acm_cli.graph_backfill import add_parser as add_entities_parser
from acm_cli.store_split import TABLES, heirs

if TYPE_CHECKING:
    from psycopg import AsyncConnection, sql

PASSWORD_ENV = "ACM_DB_PASSWORD_{SERVICE}"


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    db = sub.add_parser("db", help="database administration (talks to Postgres directly)")
    db_sub = db.add_subparsers(dest="db_command", required=True, metavar="DB_COMMAND")
    p = admin_command(
        db_sub,
        "roles",
        "create each service's Postgres role and schema, with rights on its own schema only",
        __doc__,
        run,
    )
    env_option(p, "--admin-url", "ACM_DB_ADMIN_URL", "postgresql://… of the database, as a role that may create roles")
    p.add_argument(
        "--password-env",
        default=PASSWORD_ENV,
        help=f"the environment variable holding each role's password; {{SERVICE}} is the service's name in "
        f"capitals (default {PASSWORD_ENV})",
    )
    p.add_argument(
        "--services", default=",".join(SERVICES), help=f"comma-separated (default: all, {','.join(SERVICES)})"
    )
    p.add_argument(
        "--role-prefix",
        default="acm_",
        help="roles are <prefix><service> (default acm_); roles are global to a Postgres server, so two ACM "
        "databases on one server each need their own",
    )
    p.add_argument(
        "--move-public",
        action="store_true",
        help="a database from before per-service schemas: first move each table from public to its owner's "
        "schema (and copy ingest's memories as retrieve's read model); run it before the services start",
    )
    add_entities_parser(db_sub)  # acm db entities: ingest's registry from a graph written before (issue 19)


async def run(args: argparse.Namespace) -> None:
    if not args.admin_url:
        raise ValueError("give --admin-url (or ACM_DB_ADMIN_URL): the database, as a role that may create roles")
    services = [s.strip() for s in str(args.services).split(",") if s.strip()]
    passwords = {}
    for service in services:
        schema_of(service)  # ValueError for a name that is not a service
        name = str(args.password_env).replace("{SERVICE}", service.upper())
        if not os.environ.get(name):
            raise ValueError(f"no password for {service}: set {name} (--password-env)")
        passwords[service] = os.environ[name]
    urls = await create_roles(
        str(args.admin_url), passwords, role_prefix=str(args.role_prefix), move_public=bool(args.move_public)
    )
    for service, url in urls.items():
        print(f"{service}: ACM_DATABASE_URL={url}")  # without the password: it stays where it was


def service_url(admin_url: str, role: str, password: str | None = None) -> str:
    """The admin URL with the service role's name (and password, when given) in place of the admin's."""
    parts = urlparse(admin_url)
    host = parts.netloc.rpartition("@")[2]
    user = quote(role, safe="") + (f":{quote(password, safe='')}" if password is not None else "")
    return urlunparse(parts._replace(netloc=f"{user}@{host}"))


async def create_roles(
    admin_url: str,
    passwords: Mapping[str, str],
    role_prefix: str = "acm_",
    timeout_s: float = 30.0,
    move_public: bool = False,
) -> dict[str, str]:
    """Creates (or updates) each service's role and schema; the services' URLs, without their passwords.
    ``role_prefix``: roles are global to the Postgres server, so a test's throwaway database uses its own.
    ``move_public``: first move the tables of a database from before (all in ``public``) to their owners."""
    from psycopg import AsyncConnection, sql  # here: every other acm command starts without the driver

    async with await AsyncConnection.connect(admin_url, autocommit=True, connect_timeout=int(timeout_s)) as conn:
        await conn.execute(sql.SQL("SET statement_timeout = {}").format(sql.Literal(int(timeout_s * 1000))))
        database = sql.Identifier(str(conn.info.dbname))
        async with conn.transaction():
            await conn.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM PUBLIC").format(database))
            await conn.execute("REVOKE ALL ON SCHEMA public FROM PUBLIC")
            for service, password in passwords.items():
                await _service_role(conn, database, f"{role_prefix}{service}", schema_of(service), password)
            if move_public:
                await _move_public(conn, set(passwords))
            for service in passwords:
                await _own_tables(conn, f"{role_prefix}{service}", schema_of(service))
    return {s: service_url(admin_url, f"{role_prefix}{s}") for s in passwords}


async def _service_role(
    conn: AsyncConnection[Any], database: sql.Identifier, role_name: str, schema_name: str, password: str
) -> None:
    from psycopg import sql

    role, schema = sql.Identifier(role_name), sql.Identifier(schema_name)
    exists = await (await conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role_name])).fetchone()
    if not exists:
        await conn.execute(sql.SQL("CREATE ROLE {} LOGIN").format(role))
    # A literal, not a parameter: utility statements take none. NOSUPERUSER etc. are the defaults of CREATE
    # ROLE; said again so that a role made by hand before is brought to the same rights.
    await conn.execute(
        sql.SQL("ALTER ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD {}").format(
            role, sql.Literal(password)
        )
    )
    await conn.execute(sql.SQL("ALTER ROLE {} IN DATABASE {} SET search_path = {}").format(role, database, schema))
    await conn.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, role))
    await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {} AUTHORIZATION {}").format(schema, role))
    await conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(schema, role))
    await conn.execute(sql.SQL("REVOKE ALL ON SCHEMA {} FROM PUBLIC").format(schema))


async def _own_tables(conn: AsyncConnection[Any], role_name: str, schema_name: str) -> None:
    """Tables made in the schema by another role (a start before the roles, a move) pass to the service, so its
    migrations can alter them; their sequences (audit_log's identity) go with them."""
    from psycopg import sql

    role, schema = sql.Identifier(role_name), sql.Identifier(schema_name)
    for table in await _tables(conn, schema_name):
        await conn.execute(sql.SQL("ALTER TABLE {}.{} OWNER TO {}").format(schema, sql.Identifier(table), role))


# The layout before per-service schemas kept every table in public: each goes to its owner (the tables every
# service has of its own to the one that wrote them), derived from the same table lists as the embedded split.
MOVES = {table: heirs(group)[0] for group, tables in TABLES.items() for table in tables}
# Retrieve's read model starts as a copy of ingest's memories, then follows acm.memories.v1.
READ_MODEL = TABLES["memories"]


async def _move_public(conn: AsyncConnection[Any], services: set[str]) -> None:
    from psycopg import sql

    for table, owner in MOVES.items():
        schema = schema_of(owner)
        if owner in services and table in await _tables(conn, "public") and table not in await _tables(conn, schema):
            await conn.execute(
                sql.SQL("ALTER TABLE public.{} SET SCHEMA {}").format(sql.Identifier(table), sql.Identifier(schema))
            )
    source, target = schema_of("ingest"), schema_of("retrieve")
    for table in READ_MODEL if "retrieve" in services else ():
        if table not in await _tables(conn, source) or table in await _tables(conn, target):
            continue
        src, dst = sql.Identifier(source, table), sql.Identifier(target, table)
        await conn.execute(sql.SQL("CREATE TABLE {} (LIKE {} INCLUDING ALL)").format(dst, src))
        cur = await conn.execute(  # a generated column (the tsvector) is computed, not copied
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND table_name = %s "
            "AND is_generated = 'NEVER' ORDER BY ordinal_position",
            [source, table],
        )
        columns = sql.SQL(", ").join(sql.Identifier(str(row[0])) for row in await cur.fetchall())
        await conn.execute(sql.SQL("INSERT INTO {} ({}) SELECT {} FROM {}").format(dst, columns, columns, src))


async def _tables(conn: AsyncConnection[Any], schema: str) -> Iterable[str]:
    cur = await conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p')",
        [schema],
    )
    return [str(row[0]) for row in await cur.fetchall()]
