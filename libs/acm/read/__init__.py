"""The read path of a Fetch in one place (acm.ports.reader.ContextReader → reader.ReadSide): the prefetch pool
(pool: its format, codec and builder; prefetching: how a Fetch is served from it; warmup: loading it before
the Fetch), the full retrieval behind the Retriever port, and the session's context (session: loading it
from its owners; kept_sessions: kept between Fetches; session_context: the bundle's plan). The gateway
authenticates, authorises and routes, then calls ReadSide.fetch in its own process; anticipate decides when
and what to warm and builds pools with pool.bounded_pool. The two rankers: acm.domain.ranking."""
