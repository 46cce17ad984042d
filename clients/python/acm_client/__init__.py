"""ACM's Python SDK: ``Client`` (blocking) and ``AsyncClient`` (asyncio) over the gateway's gRPC API, with typed
results, a deadline on every call, retries of idempotent calls on UNAVAILABLE, TLS and the API key.

    from acm_client import Client, Scope
    with Client("127.0.0.1:50051", api_key) as acm:
        scope = Scope(customer_id="acme", user_id="alice", session_id="s1")
        acm.wait_job(scope, acm.ingest(scope, "I moved to Lisbon in May").job_id)
        print(acm.fetch(scope, "where do I live?").context)
"""

from acm_client._calls import DEFAULT_ADDR, Requests, Retry, Tls
from acm_client.aio import AsyncClient
from acm_client.client import Client
from acm_client.errors import (
    AcmError,
    AlreadyExists,
    Cancelled,
    DeadlineExceeded,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from acm_client.types import (
    Accepted,
    AgentSchema,
    Compaction,
    Context,
    ContextPart,
    ExportPage,
    Job,
    JobStatus,
    Layer,
    Memory,
    MemoryFilter,
    MemoryJob,
    MemoryPage,
    MemoryStatus,
    PinnedEntity,
    Role,
    Scope,
    SealingKey,
    StoredMemory,
    Tier,
    Trust,
    Turn,
)

__all__ = [
    "DEFAULT_ADDR",
    "Accepted",
    "AcmError",
    "AgentSchema",
    "AlreadyExists",
    "AsyncClient",
    "Cancelled",
    "Client",
    "Compaction",
    "Context",
    "ContextPart",
    "DeadlineExceeded",
    "ExportPage",
    "FailedPrecondition",
    "Internal",
    "InvalidArgument",
    "Job",
    "JobStatus",
    "Layer",
    "Memory",
    "MemoryFilter",
    "MemoryJob",
    "MemoryPage",
    "MemoryStatus",
    "NotFound",
    "PermissionDenied",
    "PinnedEntity",
    "Requests",
    "ResourceExhausted",
    "Retry",
    "Role",
    "Scope",
    "SealingKey",
    "StoredMemory",
    "Tier",
    "Tls",
    "Trust",
    "Turn",
    "Unauthenticated",
    "Unavailable",
]
