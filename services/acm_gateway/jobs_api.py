"""ListJobs: a client's jobs for its operators (the console's jobs view), newest first, a page at a time, over
the gateway's own jobs store."""

from __future__ import annotations

from dataclasses import dataclass

from acm.domain.models import Job, JobStatus
from acm.paging import page_after, page_size, position_token
from acm.ports.stores import JobRepo


@dataclass(frozen=True)
class JobsPage:
    jobs: list[Job]
    next_page_token: str = ""


@dataclass
class ListJobs:
    jobs: JobRepo

    async def __call__(self, client_id: str, status: JobStatus | None, asked: int, page_token: str) -> JobsPage:
        size = page_size(asked)
        # One more than the page: whether another page follows, without an empty last page.
        found = await self.jobs.of_client(client_id, size + 1, status, page_after(page_token))
        if len(found) <= size:
            return JobsPage(found)
        last = found[size - 1]
        return JobsPage(found[:size], position_token(last.created_at, last.job_id))
