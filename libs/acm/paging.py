"""Page tokens of the listings ordered newest first by (time, id): ListJobs, ListDeadLetters, ListCompactions.
A token is the last item's (time, id), opaque to the caller."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from acm.domain.errors import InvalidRequest
from acm.ports.memories import MAX_PAGE_SIZE

DEFAULT_PAGE = 100
_BAD_TOKEN = "page_token is not one this server issued: pass next_page_token unchanged"


def position_token(at: datetime, item_id: str) -> str:
    """Where a page ended: its last item's (time, id)."""
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
