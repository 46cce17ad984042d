"""ListCompactions over the compact service's internal gRPC API (distributed mode): what the gateway's client
reads is compact's own records, with their sessions, paged; a wrong service token is refused."""

from __future__ import annotations

from dataclasses import replace

import pytest

from acm.adapters.grpc_compactor import GrpcCompactor
from acm.domain.errors import InvalidRequest, Unavailable
from tests.integration import test_session_reads as session_reads
from tests.integration.test_session_reads import Served

served = session_reads.served  # compact's servicer on a real gRPC server over Postgres


async def test_a_clients_compactions_over_grpc_are_what_compact_stored(served: Served) -> None:
    s, scope = served, served.scope
    first = await s.api.compact(scope)
    second = await s.api.compact(scope)  # within budget now: unchanged, recorded too
    page = await s.compactor.compactions(scope.client_id, 1, "")
    assert [(sc.session_id, r.compaction_id) for sc, r in page.compactions] == [("s1", second.compaction_id)]
    rest = await s.compactor.compactions(scope.client_id, 1, page.next_page_token)
    [(session, record)] = rest.compactions
    assert session == replace(scope, agent_id="") and record == replace(first, summariser="deterministic")
    assert rest.next_page_token == ""
    assert (await s.compactor.compactions("someone-else", 10, "")).compactions == []
    with pytest.raises(InvalidRequest, match="page_token"):
        await s.compactor.compactions(scope.client_id, 10, "zz")
    with pytest.raises(Unavailable, match="UNAUTHENTICATED"):
        await GrpcCompactor(s.channel, 5.0, "another-secret-0123456789abcdef").compactions(scope.client_id, 10, "")
