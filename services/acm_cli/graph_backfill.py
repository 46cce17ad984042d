"""`acm db entities`: fills ingest's entity registry from a graph written before retrieve owned it (issue 19).

Before, ingest resolved mentions against the graph; now it reads its own registry (acm.ports.entities) and only
retrieve opens the graph. The graph's entities stay valid, so an upgrade copies them (name, type, owner, every
alias) into the registry once, before the new ingest starts (a start without it still works: names already seen
map to the same deterministic ids, but aliases learned earlier are unknown until said again). Idempotent: the
registry's upserts only add. Embedded mode does it by itself at the first start with the old ``graph.db``.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from acm.ports.entities import EntityRegistry
from acm.ports.stores import GraphStore
from acm_cli.admin_options import admin_command, env_option

log = logging.getLogger("acm.cli")

BATCH = 1000


async def backfill_entities(graph: GraphStore, registry: EntityRegistry, batch: int = BATCH) -> int:
    """Every entity of ``graph`` into ``registry``, ``batch`` at a time; returns how many."""
    after, copied = "", 0
    while page := await graph.entities_after(after, batch):
        await registry.upsert(page)
        copied += len(page)
        after = page[-1].entity_id
        log.info("entities copied to ingest's registry: %d", copied)
    return copied


def add_parser(db_sub: argparse._SubParsersAction[Any]) -> None:
    p = admin_command(
        db_sub,
        "entities",
        "fill ingest's entity registry from the graph (once, when upgrading to a graph only retrieve opens)",
        __doc__,
        run,
    )
    env_option(p, "--graph-url", "ACM_GRAPH_URL", "the graph")
    env_option(p, "--database-url", "ACM_DATABASE_URL", "ingest's store, as ingest's role")


async def run(args: argparse.Namespace) -> None:
    from acm.bootstrap import open_graph, open_relational

    if not args.graph_url or not args.database_url:
        raise ValueError("give --graph-url and --database-url (ingest's store), or ACM_GRAPH_URL and ACM_DATABASE_URL")
    graph = await open_graph(args.graph_url, 60.0)
    try:
        ingest = await open_relational(args.database_url, 60.0, service="ingest")
        try:
            print(f"{await backfill_entities(graph, ingest.entities)} entities in ingest's registry")
        finally:
            await ingest.close()
    finally:
        await graph.close()
