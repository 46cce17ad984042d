"""Every topic name in one place."""

TURNS = "acm.turns.v1"
MEMORIES = "acm.memories.v1"
# retrieve applied a session's memories to its copy: anticipate warms the session's pool from that copy
MEMORIES_INDEXED = "acm.memories.indexed.v1"
COMPACTION_REQUESTS = "acm.compaction.requests.v1"
PREFETCH_SIGNALS = "acm.prefetch.signals.v1"
PREFETCH_POOLS = "acm.prefetch.pools.v1"  # hints for gateways: a session's pool is ready
SCHEMAS = "acm.schemas.v1"
FORGET = "acm.forget.v1"
MEMORY_EDITS = "acm.memory.edits.v1"  # the Memory API's writes, applied by ingest
JOBS = "acm.jobs.v1"  # jobs' outcomes (ingest, retrieve), applied by the gateway, which owns the jobs table


# The consumer groups whose dead letters the gateway keeps for ListDeadLetters (acm.asyncapi.CONSUMERS' groups but
# the replicas' own warm-up groups, whose hints are worthless late, and the gateway's dead-letter group itself).
DEAD_LETTER_GROUPS = ("ingest", "architect", "retrieve", "anticipate", "compact", "gateway-jobs")


def dead_letter(group: str) -> str:
    """One dead-letter topic per consumer group."""
    return f"acm.dlq.{group}.v1"


def is_dead_letter(topic: str) -> bool:
    return topic.startswith("acm.dlq.") and topic.endswith(".v1")
