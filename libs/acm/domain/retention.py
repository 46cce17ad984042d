"""When memories expire (pure): each layer lives for its schema TTL after it was last written."""

from __future__ import annotations

from datetime import datetime, timedelta

from acm.domain.models import Layer
from acm.domain.schema import Retention


def ttl_days(retention: Retention, layer: Layer) -> float:
    return {
        Layer.SHORT: retention.short_ttl_days,
        Layer.MID: retention.mid_ttl_days,
        Layer.LONG: retention.long_ttl_days,
    }[layer]


def expiry_cutoffs(retention: Retention, now: datetime) -> dict[Layer, datetime]:
    """Layer → the time before which a memory last written then has expired. A TTL of 0 means keep forever."""
    cutoffs = {layer: ttl_days(retention, layer) for layer in Layer}
    return {layer: now - timedelta(days=days) for layer, days in cutoffs.items() if days > 0}
