"""VectorStore over qdrant-edge: Qdrant's Rust engine in-process, one shard in one folder (embedded mode).

Same payload layout and the same visibility / erasure filters as the server adapter (qdrant_store), in
qdrant-edge's own classes. This module deliberately does not import qdrant_client (≈1.7 s to import).

Writes, counts and lookups are synchronous and sub-millisecond, so they run inline on the event loop;
searches (qdrant-edge releases the GIL while it searches) and opening, flushing, optimising and closing (which
can take seconds on a big shard) go to a worker thread. The shard is thread-safe, so an inline call
overlapping one of those is fine. A search's filter is kept for the next search with the same terms
(``Filters``). One process per folder (WAL lock).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import qdrant_edge as qe

from acm.adapters import qdrant_terms as qt
from acm.domain.scope import ForgetLevel, Scope
from acm.ports.stores import VectorPoint


def _eq(key: str, value: str) -> qe.FieldCondition:
    return qe.FieldCondition(key, match=qe.MatchValue(value))


def _condition(c: qt.Condition) -> qe.ConditionType:
    if isinstance(c, qt.Terms):
        return to_filter(c)
    if isinstance(c, qt.HasIds):
        return qe.HasIdCondition({qt.point_id(m) for m in c.memory_ids})
    return _eq(*c)


def to_filter(terms: qt.Terms) -> qe.Filter:
    """The shared filter terms (qdrant_terms) as a qdrant-edge filter."""
    return qe.Filter(must=[_condition(c) for c in terms.must], should=[_condition(c) for c in terms.should] or None)


class Filters:
    """The qdrant-edge filters of the most recent searches, by their terms (LRU, at most ``max_entries``).
    A search among a person's memories names up to 2,000 ids, the same ones query after query, and building
    their id condition cost about 4 ms of CPU a search (a third of its filter's cost in Python objects); the
    terms are the whole key (scope, tiers, model, the ids in order), so a hit is the very filter a fresh
    build would make. A filter holds ids, not points: a deleted point is simply not found. Used from one
    event loop: no lock."""

    def __init__(self, max_entries: int = 128) -> None:
        self.max_entries = max_entries
        self._filters: OrderedDict[qt.Terms, qe.Filter] = OrderedDict()

    def __len__(self) -> int:
        return len(self._filters)

    def get(self, terms: qt.Terms) -> qe.Filter:
        built = self._filters.get(terms)
        if built is None:
            built = to_filter(terms)
            if self.max_entries <= 0:
                return built
            self._filters[terms] = built
            while len(self._filters) > self.max_entries:
                self._filters.popitem(last=False)
        else:
            self._filters.move_to_end(terms)
        return built


def _copy_live(old: qe.EdgeShard, to: Path, dim: int) -> None:
    """A new shard at ``to`` holding every point of ``old`` (vectors and payloads) and its payload indexes."""
    _shred(to)  # a rewrite that died half-way
    config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine))
    new = qe.EdgeShard.create(str(to), config)
    try:
        for field in old.info().payload_schema:
            new.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
        offset = None
        while True:
            records, offset = old.scroll(
                qe.ScrollRequest(offset=offset, limit=1000, with_payload=True, with_vector=True)
            )
            if records:
                batch = [qe.Point(r.id, r.vector, r.payload) for r in records]  # type: ignore[arg-type]
                new.update(qe.UpdateOperation.upsert_points(batch))
            if offset is None:
                break
        new.flush()
    finally:
        new.close()


def _shred(folder: Path) -> None:
    """Overwrite every file under ``folder`` with zeros, then remove it (absent: nothing to do). Zeroing
    reaches the same blocks on ordinary filesystems, not on copy-on-write ones or an SSD's spare blocks."""
    if not folder.exists():
        return
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            size = path.stat().st_size
            with path.open("r+b") as f:
                for _ in range(0, size, 1 << 20):
                    f.write(bytes(min(1 << 20, size - f.tell())))
                f.flush()
                os.fsync(f.fileno())
    shutil.rmtree(folder, ignore_errors=True)


class EdgeVectorStore(qt.ScopedSearch):
    """VectorStore over one qdrant-edge shard in ``path`` (created by ensure, reopened if present)."""

    def __init__(self, path: str | Path) -> None:
        self._path = Path(path)
        self._shard: qe.EdgeShard | None = None
        self._open_lock = asyncio.Lock()
        self._writing = asyncio.Lock()  # a rewrite (vacuum) holds it: no write lands in the shard being copied
        self._closed = False
        self._dim: int | None = None  # known once ensure() opened the shard with a config
        self._searching = 0  # queries running in worker threads: a shard is closed only once none is
        self._no_search = asyncio.Event()
        self._no_search.set()
        self._filters = Filters()  # search filters, rebuilt per query before (issue 20: CPU a Fetch)

    def _check_open(self) -> None:
        if self._closed:
            # Reopening silently would leave a shard (and its WAL lock) that nobody closes.
            raise RuntimeError(f"vector store at {self._path} is closed")

    def _exists(self) -> bool:
        return (self._path / "edge_config.json").exists()

    def _stored_dim(self) -> int | None:
        """The vector size the shard on disk was made with (the config qdrant-edge keeps beside it)."""
        size = json.loads((self._path / "edge_config.json").read_text()).get("vectors", {}).get("", {}).get("size")
        return size if isinstance(size, int) else None

    async def ensure(self, dim: int) -> None:
        async with self._open_lock:
            self._check_open()
            if self._shard is None:
                config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=dim, distance=qe.Distance.Cosine))
                if self._exists():
                    # Checked here: load would fail on another size too, but with a bare Exception that only
                    # its message tells apart from any other failure.
                    stored = self._stored_dim()
                    if stored is not None and stored != dim:
                        raise ValueError(f"vector shard at {self._path} holds {stored}-d vectors, not {dim}-d")
                    self._shard = await asyncio.to_thread(qe.EdgeShard.load, str(self._path), config)
                else:
                    self._shard = await asyncio.to_thread(qe.EdgeShard.create, str(self._path), config)
                self._dim = dim
            elif self._dim is not None and self._dim != dim:
                raise ValueError(f"vector shard at {self._path} holds {self._dim}-d vectors, not {dim}-d")
            shard = self._shard
        existing = shard.info().payload_schema
        for field in qt.INDEXED_FIELDS:
            if field not in existing:
                shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))

    async def _open(self) -> qe.EdgeShard:
        """The shard; loads an existing one on first use, so a reopened store works before ensure()."""
        if self._shard is not None:
            return self._shard
        async with self._open_lock:
            self._check_open()
            if self._shard is None:
                if not self._exists():
                    raise RuntimeError(f"no vector shard at {self._path}: call ensure(dim) first")
                self._shard = await asyncio.to_thread(qe.EdgeShard.load, str(self._path))
            return self._shard

    async def upsert(self, points: Sequence[VectorPoint]) -> None:
        if not points:
            return
        batch = [
            # A malformed memory id raises ValueError here, before anything is written.
            qe.Point(qt.point_id(p.memory_id), [float(x) for x in p.vector], qt.point_payload(p))
            for p in points
        ]
        async with self._writing:
            shard = await self._open()
            shard.update(qe.UpdateOperation.upsert_points(batch))

    async def _nearest(self, vector: list[float], visible: qt.Terms, limit: int) -> list[tuple[object, float]]:
        shard = await self._open()
        request = qe.QueryRequest(
            limit=limit, query=qe.Query.Nearest(vector), filter=self._filters.get(visible), with_payload=False
        )
        # In a worker thread: qdrant-edge releases the GIL while it searches (2 ms a query at 3k points), so
        # concurrent Fetches search beside the event loop instead of holding it (issue 20).
        self._searching += 1
        self._no_search.clear()
        try:
            found = await asyncio.to_thread(shard.query, request)
        finally:
            self._searching -= 1
            if not self._searching:
                self._no_search.set()
        return [(p.id, p.score) for p in found]

    async def _searches_done(self) -> None:
        """Waits for the queries already running on the shard being closed (new ones wait on the open lock)."""
        await self._no_search.wait()

    async def forget(self, scope: Scope, level: ForgetLevel) -> None:
        doomed = to_filter(qt.forgetting(scope, level))
        async with self._writing:
            shard = await self._open()
            erased = shard.count(qe.CountRequest(exact=True, filter=doomed))
            if erased:  # the filter (ids) is written to the WAL: a replayed Forget must not write it again
                shard.update(qe.UpdateOperation.delete_points_by_filter(doomed))
        if erased:
            await self.vacuum()

    async def delete(self, scope: Scope, memory_ids: Sequence[str]) -> None:
        if not memory_ids:
            return
        mine, shared = (to_filter(t) for t in qt.deletions(scope, tuple(memory_ids)))
        async with self._writing:
            shard = await self._open()
            forgotten = shard.count(qe.CountRequest(exact=True, filter=shared))
            # Only filters that match are written (each lands in the WAL with the scope's ids).
            if shard.count(qe.CountRequest(exact=True, filter=mine)):
                shard.update(qe.UpdateOperation.delete_points_by_filter(mine))
            if forgotten:
                shard.update(qe.UpdateOperation.delete_points_by_filter(shared))
        if forgotten:
            await self.vacuum()

    async def vacuum(self) -> None:
        """Rewrite the shard with its live points only. A delete leaves the point's vector and payload (ids,
        session) in the segment files and the WAL until rewritten; qdrant-edge's own vacuum skips small
        segments and never rewrites the WAL. The new shard is built beside the old one from a scroll (reads
        go on meanwhile, writes wait), swapped in, and the old folder's files are zeroed before removal."""
        async with self._writing:
            old = await self._open()
            dim = self._dim or int(json.loads((self._path / "edge_config.json").read_text())["vectors"][""]["size"])
            fresh = self._path.with_name(self._path.name + ".rewrite")
            trash = self._path.with_name(self._path.name + ".forgotten")
            await asyncio.to_thread(_copy_live, old, fresh, dim)
            async with self._open_lock:  # no search reopens the folder while it is being swapped
                self._shard = None
                await self._searches_done()
                await asyncio.to_thread(old.close)
                await asyncio.to_thread(_shred, trash)
                self._path.rename(trash)
                fresh.rename(self._path)  # a crash between the renames leaves both folders: see docs/privacy.md
                self._shard = await asyncio.to_thread(qe.EdgeShard.load, str(self._path))
            await asyncio.to_thread(_shred, trash)

    async def count(self, model: str | None = None) -> int:
        """Points in the shard (of ``model`` when given)."""
        shard = await self._open()
        only = None if model is None else qe.Filter(must=[_eq("model", model)])
        return shard.count(qe.CountRequest(exact=True, filter=only))

    async def models_of(self, memory_ids: Sequence[str]) -> dict[str, str]:
        if not memory_ids:
            return {}
        shard = await self._open()
        records = shard.retrieve([qt.point_id(m) for m in memory_ids], True, False)
        return {qt.memory_id_of(r.id): str((r.payload or {}).get("model", "")) for r in records}

    async def reset(self, dim: int) -> None:
        async with self._open_lock:
            self._check_open()
            shard, self._shard = self._shard, None
            if shard is not None:
                await self._searches_done()
                await asyncio.to_thread(shard.close)
            await asyncio.to_thread(shutil.rmtree, self._path, True)
            self._dim = None
        await self.ensure(dim)

    async def optimize(self) -> bool:
        """Build HNSW / merge segments; the shard never does this by itself. Slow: run off the hot path."""
        shard = await self._open()
        return await asyncio.to_thread(shard.optimize)

    async def flush(self) -> None:
        """Updates are already durable through the WAL; flushing just shortens the replay on next open."""
        shard = await self._open()
        await asyncio.to_thread(shard.flush)

    async def close(self) -> None:
        async with self._open_lock:
            self._closed = True
            shard, self._shard = self._shard, None
            if shard is not None:
                await self._searches_done()
                await asyncio.to_thread(shard.flush)
                await asyncio.to_thread(shard.close)
