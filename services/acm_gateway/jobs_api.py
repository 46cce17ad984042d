"""ListJobs: a client's jobs for its operators (the console's jobs view), newest first, a page at a time, over
the gateway's own jobs store; and the (time, id) page tokens it and ListDeadLetters share."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from datetime import datetime

from acm.domain.errors import InvalidRequest
from acm.domain.models import Job, JobStatus
from acm.ports.memories import MAX_PAGE_SIZE
from acm.ports.stores import JobRepo

DEFAULT_PAGE = 100
_BAD_TOKEN = "page_token is not one this server issued: pass next_page_token unchanged"


def position_token(at: datetime, item_id: str) -> str:
    """Where a page ended: its last item's (time, id), opaque to the caller."""
    raw = f"{at.isoformat()}|{item_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def page_after(token: str) -> tuple[datetime, str] | None:
    """The (time, id) a position_token names; None for the first page."""
    if not token:
        return None
    try:
        at, item_id = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode().split("|", 1)
        created = datetime.fromisoformat(at)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise InvalidRequest(_BAD_TOKEN) from None
    if created.tzinfo is None or not item_id:
        raise InvalidRequest(_BAD_TOKEN)
    return created, item_id


def page_size(asked: int) -> int:
    if asked < 0 or asked > MAX_PAGE_SIZE:
        raise InvalidRequest(f"page_size must be between 1 and {MAX_PAGE_SIZE}, or 0 for {DEFAULT_PAGE} (got {asked})")
    return asked or DEFAULT_PAGE


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
