from __future__ import annotations

from pydantic import Field

from acm.settings import DEFAULT_EMBEDDER, ConsumerSettings, OptionalLlm


# ACM_LLM_URL: an optional endpoint for fact extraction (empty: rules only). Turns whose metadata says
# local_only=true never go to it.
class IngestSettings(ConsumerSettings, OptionalLlm):
    # ACM_DATABASE_URL: its own store, the memories' write model and the entity registry. No graph_url: the entity
    # graph is retrieve's (acm.ownership.GRAPH_OWNER); ingest tells it on acm.memories.v1.
    # ACM_EMBEDDER (acm.settings.DEFAULT_EMBEDDER); ingest and retrieve must use the same one.
    embedder: str = DEFAULT_EMBEDDER
    max_turn_bytes: int = Field(65536, gt=0)
    # ACM_REQUIRE_SEALED_TURNS=true: a turn published in clear (by an agent writing to Kafka itself without sealing
    # it with GetSealingKey's key) goes to the dead letters with the reason; off by default for such publishers.
    require_sealed_turns: bool = False
    # The LLM judge of doubtful injection verdicts (acm.injection_judge), when ACM_LLM_URL is set:
    # ACM_INJECTION_JUDGE=false leaves trust to the rules alone; the deadline of one judgement; answers cached.
    injection_judge: bool = True
    injection_judge_timeout_s: float = Field(5.0, gt=0)
    injection_judge_cache: int = Field(4096, ge=0)
    # ACM_INJECTION_MEANING (on): a turn the rules cleared is also scored by the learned check, its pieces'
    # vectors and lexical cues through shipped weights (acm.domain.injection_model), on the embedder they fit
    # (DEFAULT_EMBEDDER; built beside ingest's when ACM_EMBEDDER is another). Measured: docs/experiments.md,
    # "Issue 18: a learned injection check".
    injection_meaning: bool = True
    # ACM_INJECTION_OTHER_LANGUAGES (on): its multilingual model for pieces in languages other than English and
    # Chinese (the language identifier, ~80 MB at start; USE multilingual v3, ~125 MB once a first such piece
    # came); false: those pieces are scored by the English/Chinese model. Measured: docs/experiments.md,
    # "Issue 18: orders in other languages".
    injection_other_languages: bool = True
    # ACM_SECRET_MODEL (on): after the rules, the learned second opinion for secrets said in prose
    # (acm.domain.secret_model); false: the rules alone, e.g. for artifacts whose ids matter more than the
    # passwords it adds. Measured: docs/experiments.md, "Issue 18: a learned secret detector". Set the gateway's too.
    secret_model: bool = True
    # Turns of different sessions handled at once within one consumer's micro-batch (ACM_INGEST_CONCURRENCY):
    # their store round trips overlap and their facts are embedded in one batch; 1 = a turn at a time.
    # One session's turns stay in order either way.
    ingest_concurrency: int = Field(4, ge=1)
    # The consolidator's TTL sweep runs for a writing user at most this often.
    expiry_sweep_every_s: float = Field(3600.0, gt=0)
    # ...and for every user, writing or not, every this many seconds (0: off), at most max_users per run.
    expiry_idle_sweep_every_s: float = Field(3600.0, ge=0)
    expiry_idle_sweep_max_users: int = Field(1000, gt=0)
