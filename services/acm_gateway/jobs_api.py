"""ListJobs: a client's jobs for its operators (the console's jobs view), newest first, a page at a time, over
the gateway's own jobs store."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, JobStatus
from acm.ports.memories import MAX_PAGE_SIZE
from acm.ports.stores import JobRepo

DEFAULT_JOBS_PAGE = 100
_BAD_TOKEN = "page_token is not one this server issued: pass next_page_token unchanged"


def jobs_token(job: Job) -> str:
    """Where a page ended: its last job's (created_at, job_id), opaque to the caller."""
    raw = f"{job.created_at.isoformat()}|{job.job_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jobs_mark(token: str) -> tuple[datetime, str] | None:
    if not token:
        return None
    try:
        at, job_id = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().split("|", 1)
        created = datetime.fromisoformat(at)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest(_BAD_TOKEN) from None
    if created.tzinfo is None or not job_id:
        raise InvalidRequest(_BAD_TOKEN)
    return created, job_id


@dataclass(frozen=True)
class JobsPage:
    jobs: list[Job]
    next_page_token: str = ""


@dataclass
class ListJobs:
    jobs: JobRepo

    async def __call__(self, client_id: str, status: JobStatus | None, page_size: int, page_token: str) -> JobsPage:
        if page_size < 0 or page_size > MAX_PAGE_SIZE:
            raise InvalidRequest(
                f"page_size must be between 1 and {MAX_PAGE_SIZE}, or 0 for {DEFAULT_JOBS_PAGE} (got {page_size})"
            )
        size = page_size or DEFAULT_JOBS_PAGE
        # One more than the page: whether another page follows, without an empty last page.
        found = await self.jobs.of_client(client_id, size + 1, status, jobs_mark(page_token))
        if len(found) <= size:
            return JobsPage(found)
        return JobsPage(found[:size], jobs_token(found[size - 1]))
