"""The generated client of `acm bench scale`: memories of one client, reproducible from a seed, in the shapes
ingest writes (user-tier facts "<speaker>: <sentence>" and tool records, with their entities and co-mention
relations), many users and sessions, loaded in chunks so that sizes are cumulative (the first 10k memories of
the 1M run are the 10k run's).

Texts come from the fleet generator (acm_benchmarks.fleet_turns: template dialogue and tool-heavy sessions):
PERSONAS pools of POOL turns; user ``u`` walks pool ``u % PERSONAS`` from an offset of its own, so a long
history repeats lines, as real ones repeat patterns. Users join as the client grows: memory ``i`` belongs to
one of the first max(MIN_USERS, sqrt(i + 1)) users (1000 users at 1M; the oldest hold the longest histories).

Vectors: each distinct text is embedded once with the real model (a few thousand texts); a memory's vector is
that embedding plus a small Gaussian jitter of its own (cosine ~0.95 to the text's), normalised. So the
neighbourhoods are those of real sentences, duplicates are not identical points, and 1M embeddings are not
computed (on 2 cores that would take about an hour). Queries are a user's own dialogue lines, embedded by
the real retrieve use case as any Fetch is.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from acm.domain.extract import mentions
from acm.domain.models import Entity, Layer, Memory, Relation
from acm.domain.scope import Scope, Tier

PERSONAS = 32
POOL = 500
MIN_USERS = 8
CUSTOMERS = 20
SESSION_MEMORIES = 40  # a user's memories per session
STEP = timedelta(seconds=30)  # between two memories of the client: 1M memories span ~350 days
T0 = datetime(2025, 1, 1, tzinfo=UTC)
JITTER = 0.3  # norm of a memory's own noise against its text's unit vector
AGENT = "scale-agent"
_ENTITY_NS = uuid.UUID("5ca1e000-0000-4000-8000-000000000000")


@dataclass(frozen=True, slots=True)
class Line:
    """One distinct text of the pools, with what a memory of it carries."""

    text: str
    said: str  # a user's line without its speaker: what that user would ask with
    role: str
    tool_name: str
    tokens: int
    names: tuple[str, ...]  # entity mentions (names), the speaker first


@dataclass(frozen=True, slots=True)
class Chunk:
    """Memories [start, stop) of the client, ready for the stores' batch paths."""

    memories: list[Memory]
    vectors: np.ndarray  # (n, dim) float32, unit rows
    entities: list[Entity]  # first seen in this chunk
    mentions: list[tuple[Memory, list[str]]]  # memory → entity ids it mentions
    relations: list[Relation]


def user_scope(client_id: str, user: int, session: int = 0) -> Scope:
    return Scope(
        client_id, f"customer-{user % CUSTOMERS}", f"user-{user}", agent_id=AGENT, session_id=f"u{user}-s{session}"
    )


class Corpus:
    """The client's memories for up to ``size`` memories; ``chunk`` must be called in order."""

    def __init__(
        self,
        client_id: str,
        size: int,
        seed: int,
        embed: Callable[[Sequence[str]], list[list[float]]],
        count_tokens: Callable[[str], int],
    ) -> None:
        from acm_benchmarks.fleet_turns import agent_turns

        self.client_id = client_id
        self.seed = seed
        rng = np.random.default_rng(seed)
        index = np.arange(size, dtype=np.float64)
        users_then = np.maximum(MIN_USERS, np.floor(np.sqrt(index + 1)))
        self.users = np.floor(rng.random(size) * users_then).astype(np.int64)
        distinct: dict[tuple[str, str, str, str], int] = {}
        self.pools: list[list[int]] = []
        for persona in range(PERSONAS):
            pool = []
            for turn in agent_turns(persona, POOL, seed):
                text = f"{turn.speaker}: {turn.content}" if turn.speaker else turn.content
                key = (text, turn.content if turn.role == "user" else "", turn.role, turn.tool_name)
                pool.append(distinct.setdefault(key, len(distinct)))
            self.pools.append(pool)
        self.lines = [
            Line(text, said, role, tool, count_tokens(text), _names(text, said, role))
            for (text, said, role, tool) in sorted(distinct, key=distinct.__getitem__)
        ]
        # Each memory's line and its rank among its user's memories, fixed up front (sizes are cumulative).
        seen: dict[int, int] = {}
        self.line_of = np.empty(size, dtype=np.int64)
        self.rank = np.empty(size, dtype=np.int64)
        for i, user in enumerate(self.users.tolist()):
            k = seen.get(user, 0)
            seen[user] = k + 1
            self.rank[i] = k
            self.line_of[i] = self.pools[user % PERSONAS][(k + 37 * (user // PERSONAS)) % POOL]
        used = np.unique(self.line_of)  # only the lines some memory carries are embedded (tiny sizes: a few)
        vectors = np.asarray(embed([self.lines[i].text for i in used.tolist()]), dtype=np.float32)
        self.dim = int(vectors.shape[1])
        self.base = np.zeros((len(self.lines), self.dim), dtype=np.float32)
        self.base[used] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        self.embedded = len(used)
        self.restart()

    def restart(self, client_id: str | None = None) -> None:
        """Back to no memory loaded (the same memories again, for another set of stores)."""
        self.client_id = client_id or self.client_id
        self._entities: set[str] = set()
        self.next = 0

    def user_of(self, index: int) -> int:
        return int(self.users[index])

    def chunk(self, stop: int) -> Chunk:
        start, self.next = self.next, stop
        rng = np.random.default_rng([self.seed, start])
        ids = [uuid.UUID(bytes=bytes(b), version=4).hex for b in rng.integers(0, 256, (stop - start, 16), np.uint8)]
        line_ids = self.line_of[start:stop]
        memories: list[Memory] = []
        entities: list[Entity] = []
        links: list[tuple[Memory, list[str]]] = []
        relations: list[Relation] = []
        for i, memory_id in zip(range(start, stop), ids, strict=True):
            user = self.user_of(i)
            line = self.lines[int(self.line_of[i])]
            scope = user_scope(self.client_id, user, int(self.rank[i]) // SESSION_MEMORIES)
            owner = scope.owner(Tier.USER)
            dialogue = line.role == "user"
            memory = Memory(
                memory_id=memory_id,
                owner=owner,
                text=line.text,
                layer=Layer.LONG if dialogue and i % 10 == 0 else Layer.MID,
                kind="fact" if dialogue else "tool_record",
                source_turn_ids=(memory_id,),
                created_at=T0 + STEP * i,
                agent_id=AGENT,
                session_id=scope.session_id,
                token_count=line.tokens,
                role=line.role,
                tool_name=line.tool_name,
            )
            memories.append(memory)
            linked = []
            for name in line.names:
                entity_id = uuid.uuid5(_ENTITY_NS, f"{self.client_id}|{user}|{name.lower()}").hex
                linked.append(entity_id)
                if entity_id not in self._entities:
                    self._entities.add(entity_id)
                    entities.append(Entity(entity_id, owner, name, "name"))
            if linked:
                links.append((memory, linked))
            if len(linked) > 1:
                relations.append(Relation(linked[0], linked[1], "co_mentioned", memory_id, owner))
        noise = rng.standard_normal((stop - start, self.dim)).astype(np.float32) * (JITTER / math.sqrt(self.dim))
        vectors = self.base[line_ids] + noise
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return Chunk(memories, vectors, entities, links, relations)

    def queries(self, upto: int, count: int, seed: int) -> list[tuple[Scope, str]]:
        """``count`` Fetches over the first ``upto`` memories: a user's own dialogue line (without the speaker),
        asked in one of that user's sessions; distinct texts, so no query vector is served from the cache."""
        rng = np.random.default_rng([self.seed, seed, upto])
        out: list[tuple[Scope, str]] = []
        asked: set[str] = set()
        for i in rng.permutation(upto):
            line = self.lines[int(self.line_of[i])]
            question = line.said
            if not question or question in asked:
                continue
            asked.add(question)
            user = self.user_of(int(i))
            sessions = int(self.rank[i]) // SESSION_MEMORIES + 1  # that user's sessions up to this memory
            out.append((user_scope(self.client_id, user, int(rng.integers(sessions))), question))
            if len(out) == count:
                break
        return out


def _names(text: str, said: str, role: str) -> tuple[str, ...]:
    """The entity names ingest would link: the speaker of a dialogue line, then the names it mentions."""
    if role != "user":
        return ()
    found = [text[: -len(said) - 2]] if text != said else []
    found += [m.text for m in mentions(said) if m.type == "name"]
    return tuple(dict.fromkeys(found))[:4]
