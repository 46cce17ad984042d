"""acm.memory.edits.v1 → the Memory API's writes (acm_ingest.memory_edits). Verifies the envelope's signature,
is idempotent on event_id. An edit it cannot apply fails its job (acm.jobs.v1); else the use case publishes what it
changed with the job's counts, and retrieve reports the job DONE once applied."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from acm.convert import from_ts
from acm.domain.errors import InvalidRequest
from acm.domain.models import JobStatus, utcnow
from acm.domain.scope import Action, ForgetLevel, Scope, Tier, edit_denial
from acm.memory_wire import stored_from_pb
from acm.metrics import job_reached
from acm.ports.bus import PermanentError
from acm.ports.stores import ApiKey
from acm.v1 import events_pb2
from acm_ingest.handlers.job_event import JobEventHandler
from acm_ingest.memory_edits import ApplyMemoryEdits, Correction

log = logging.getLogger("acm.ingest")
JOB_KINDS = {"update": "memory_update", "delete": "memory_delete", "imported": "memory_import"}  # the gateway's


@dataclass
class MemoryEditsHandler(JobEventHandler):
    body = "memory_edit_requested"
    apply: ApplyMemoryEdits

    def action(self, env: events_pb2.Envelope) -> Action:
        # The gateway's rights for the same request: DeleteMemory a user-level Forget's, UpdateMemory and ImportUser
        # Ingest's.
        if env.memory_edit_requested.WhichOneof("edit") == "delete":
            return Action.forget(ForgetLevel.USER)
        return Action.INGEST

    async def handle(self, env: events_pb2.Envelope, scope: Scope, key: ApiKey) -> None:
        body = env.memory_edit_requested
        kind = body.WhichOneof("edit")
        if kind == "update" or kind == "delete":
            await self._may_change(scope, key, kind, getattr(body, kind).memory_id, env.event_id)
        try:
            if kind == "update":
                u = body.update
                edit = Correction(u.memory_id, u.new_memory_id, u.text, u.source)
                counts = await self.apply.update(scope, body.job_id, edit, from_ts(env.occurred_at) or utcnow())
            elif kind == "delete":
                counts = await self.apply.delete(scope, body.job_id, body.delete.memory_id)
            elif kind == "imported":
                memories = [stored_from_pb(m, scope) for m in body.imported.memories]
                # As ImportUser places them (a direct publisher's event could name a shared tier).
                shared = next((m for m in memories if m.tier is not Tier.USER), None)
                if shared is not None:
                    raise InvalidRequest(
                        f"only user-tier memories (ExportUser's) can be imported; memory {shared.memory_id[:40]!r} "
                        f"is {shared.tier}-tier"
                    )
                counts = await self.apply.import_(scope, body.job_id, memories)
            else:
                raise InvalidRequest(f"no edit in the event (got {kind or 'none'})")
        except InvalidRequest as exc:
            await self.fail(scope, body.job_id, JOB_KINDS.get(kind or "", "memory_edit"), exc)
        job_reached(JOB_KINDS[kind], JobStatus.DONE)  # ingest's part; retrieve reports the job DONE
        log.debug("memory %s applied (job %s): %s", kind, body.job_id, counts)

    async def _may_change(self, scope: Scope, key: ApiKey, what: str, memory_id: str, event_id: str) -> None:
        """The gateway's Memory API rule (acm.domain.scope.edit_denial) for an edit published straight to the bus: an
        agent key changes only user-tier memories. Refused: audited, dead-lettered, nothing changed."""
        found = await self.apply.memories.get(scope, [memory_id])
        reason = edit_denial(key.grant, found[0].tier, what, memory_id) if found else ""
        if reason:
            detail = f"key {key.key_id} ({key.grant.role}) {what} {found[0].tier} memory on event {event_id}: {reason}"
            await self.audit.record(scope.client_id, "request.denied", detail)
            raise PermanentError(f"key {key.key_id} may not {what} memory {memory_id!r}: {reason}")
