"""Wiring: the same register() serves the ingest process and the embedded all-in-one process."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from acm import topics
from acm.adapters.embedders import build_embedder
from acm.adapters.injection_meaning import MeaningCheck, build_meaning_check
from acm.adapters.openai_llm import llm_from_settings
from acm.adapters.tokenizer import TiktokenCounter
from acm.bootstrap import Relational
from acm.domain.models import utcnow
from acm.forget import ForgetHandler, ForgetJob
from acm.injection_judge import InjectionJudge
from acm.job_events import JobEvents
from acm.models import ModelMissing
from acm.owners import Owners, open_consumer
from acm.periodic import Periodic
from acm.ports.bus import EventBus
from acm.ports.embedder import Embedder
from acm.ports.stores import Cache
from acm.runtime import HealthServer, service_main
from acm_ingest import GROUP
from acm_ingest.consolidate import ExpireMemories, SweepIdle, SweepReport
from acm_ingest.events import BusEvents
from acm_ingest.handlers.memory_edits import MemoryEditsHandler
from acm_ingest.handlers.turns import TurnsHandler
from acm_ingest.llm_extraction import LlmFactExtractor
from acm_ingest.memory_edits import ApplyMemoryEdits
from acm_ingest.settings import IngestSettings
from acm_ingest.usecases import ForgetScope, IngestTurn


def extractor(settings: IngestSettings) -> LlmFactExtractor | None:
    llm = llm_from_settings(settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)
    return LlmFactExtractor(llm) if llm else None


def judge(settings: IngestSettings) -> InjectionJudge | None:
    """The LLM judge of doubtful facts: only with an endpoint, and unless ACM_INJECTION_JUDGE=false."""
    llm = llm_from_settings(settings.llm_url, settings.llm_model, settings.llm_api_key, settings.llm_timeout_s)
    if llm is None or not settings.injection_judge:
        return None
    return InjectionJudge(llm, settings.injection_judge_timeout_s, settings.injection_judge_cache)


def meaning_check(settings: IngestSettings, embedder: Embedder) -> MeaningCheck | None:
    """The learned second-stage injection check (ACM_INJECTION_MEANING, on by default): the shipped model on
    ingest's embedder when its weights fit it (else on the embedder they fit, built here), and the multilingual
    model for pieces in other languages (ACM_INJECTION_OTHER_LANGUAGES)."""
    if not settings.injection_meaning:
        return None
    try:
        return build_meaning_check(
            embedder,
            other_languages=settings.injection_other_languages,
            threads=settings.compute_threads,
            models_dir=settings.models_dir,
            source=settings.models_source,
        )
    except ModelMissing as e:  # fail fast, naming both ways out
        raise ModelMissing(f"the injection check's model: {e} (or set ACM_INJECTION_MEANING=false)") from e


def register(
    bus: EventBus,
    rel: Relational,
    cache: Cache,
    embedder: Embedder,
    settings: IngestSettings,
    owners: Owners,
    now: Callable[[], datetime] = utcnow,
) -> Periodic:
    """Subscribes the handlers; returns the idle expiry sweep, for the caller to start and stop. ``now`` is
    the clock memories' TTLs count on; ``owners``: the gateway's API keys and the architect's schemas. No graph:
    it is retrieve's (acm.ownership.GRAPH_OWNER); entities are resolved in ``rel.entities``, ingest's registry."""
    events = BusEvents(bus)
    jobs = JobEvents(bus)  # job outcomes go to the gateway, which owns jobs
    expire = ExpireMemories(rel.memories, cache, events, every_s=settings.expiry_sweep_every_s)
    ingest = IngestTurn(
        memories=rel.memories,
        entities=rel.entities,
        cache=cache,
        events=events,
        embedder=embedder,
        tokens=TiktokenCounter(),
        schemas=owners.schemas,
        audit=rel.audit,
        extractor=extractor(settings),
        judge=judge(settings),
        meaning=meaning_check(settings, embedder),
        expire=expire,
        now=now,
        secret_model=settings.secret_model,
    )
    bus.subscribe(
        topics.TURNS,
        GROUP,
        TurnsHandler(
            ingest,
            settings.max_turn_bytes,
            settings.require_sealed_turns,
            keys=owners.keys,
            jobs=jobs,
            processed=rel.processed,
            audit=rel.audit,
        ),
        concurrency=settings.ingest_concurrency,
    )
    bus.subscribe(
        topics.FORGET,
        GROUP,
        ForgetHandler(
            ForgetScope(rel.memories, rel.entities, cache, events),
            owners.keys,
            rel.audit,
            ForgetJob(GROUP, jobs, rel.processed),
        ),
    )
    edits = ApplyMemoryEdits(
        rel.memories,
        cache,
        embedder,
        TiktokenCounter(),
        owners.schemas,
        events,
        now=now,
        secret_model=settings.secret_model,
    )
    handle_edits = MemoryEditsHandler(edits, keys=owners.keys, jobs=jobs, processed=rel.processed, audit=rel.audit)
    bus.subscribe(topics.MEMORY_EDITS, GROUP, handle_edits)
    sweep = SweepIdle(rel.memories, owners.schemas, expire, settings.expiry_idle_sweep_max_users)

    async def sweep_now() -> SweepReport:
        return await sweep(now())

    return Periodic("idle expiry sweep", sweep_now, settings.expiry_idle_sweep_every_s)


async def run(settings: IngestSettings) -> None:
    io = await open_consumer(settings, "ingest")
    embedder = build_embedder(settings.embedder, settings.compute_threads, settings.models_dir, settings.models_source)
    idle_sweep = register(io.bus, io.rel, io.cache, embedder, settings, io.owners)
    await idle_sweep.start()
    # Closed first, so a sweep in progress finishes before the stores it uses close.
    await io.serve(HealthServer(settings.health_addr), [idle_sweep])


def main() -> None:
    service_main(IngestSettings, run)
