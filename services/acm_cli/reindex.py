"""`acm reindex`: rebuild the vector index from the stored memories with the configured embedder (acm.reindex).

Embedded mode (default): the data folder's database and vectors (stop `acm serve` first: the vector shard
takes one process at a time). Distributed mode: --database-url and --vector-url (or ACM_DATABASE_URL and
ACM_VECTOR_URL), while retrieve keeps serving; restart ingest and retrieve with the new ACM_EMBEDDER once
it is done, then run it once more for the memories written in between (it only embeds what is missing).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from acm_cli.admin_options import admin_command, env_option


def add_parser(sub: argparse._SubParsersAction[Any]) -> None:
    p = admin_command(sub, "reindex", "rebuild the vector index with the configured embedder (resumable)", __doc__, run)
    p.add_argument("--embedder", help="embedding model (default: ACM_EMBEDDER, else the built-in default)")
    p.add_argument("--data-dir", dest="reindex_data_dir", metavar="DIR", type=Path, help="embedded ACM's data folder")
    env_option(p, "--database-url", "ACM_DATABASE_URL", "distributed: the database")
    env_option(p, "--vector-url", "ACM_VECTOR_URL", "distributed: the vector store")
    p.add_argument("--batch", type=int, default=256, help="memories read and embedded at a time")


async def run(args: argparse.Namespace) -> None:
    from acm.adapters.embedders import build_embedder
    from acm.bootstrap import open_relational, open_vectors
    from acm.reindex import Progress, reindex
    from acm.runtime import limit_compute_threads
    from acm.settings import load
    from acm_cli.embedded import EmbeddedSettings, Urls
    from acm_cli.store_split import database_file, split_shared_database

    settings = load(EmbeddedSettings)
    if bool(args.database_url) != bool(args.vector_url):
        raise ValueError("give both --database-url and --vector-url (distributed), or neither (embedded)")
    if args.database_url:
        database, vector = str(args.database_url), str(args.vector_url)
    else:
        data_dir = args.reindex_data_dir or settings.data_dir
        if not (data_dir / "acm.db").exists() and not database_file(data_dir, "retrieve").exists():
            raise ValueError(f"no embedded ACM data in {data_dir.resolve()} (--data-dir or ACM_DATA_DIR)")
        await split_shared_database(data_dir, settings.store_timeout_s)  # a data folder from before: one acm.db
        urls = Urls.under(data_dir, settings.vector_backend)
        database, vector = urls.databases["retrieve"], urls.vectors
    limit_compute_threads(settings.compute_threads)
    embedder = build_embedder(
        args.embedder or settings.embedder, settings.compute_threads, settings.models_dir, settings.models_source
    )
    interactive = sys.stderr.isatty()
    last = 0.0

    def report(p: Progress) -> None:
        nonlocal last
        if p.elapsed_s - last >= (0.5 if interactive else 10.0):
            last = p.elapsed_s
            print(
                ("\r" if interactive else "") + p.line(), end="" if interactive else "\n", file=sys.stderr, flush=True
            )

    rel = await open_relational(database, settings.store_timeout_s, service="retrieve")  # its read model
    vectors = await open_vectors(vector, max(settings.store_timeout_s, 60.0))
    try:
        done = await reindex(rel.memories, vectors, embedder, batch=args.batch, report=report)
        stale = await vectors.count() - await vectors.count(embedder.name)
    finally:
        await vectors.close()
        await rel.close()
    if interactive:
        print(file=sys.stderr)
    print(done.line() + (" (collection recreated for the new dimension)" if done.reset else ""), file=sys.stderr)
    if stale:
        print(f"{stale} points of other models remain (memories deleted since); searches ignore them", file=sys.stderr)
