"""GetSealingKey: the data key an agent that publishes turns to Kafka itself seals them with (docs/privacy.md,
"Direct publishers"), like a KMS's "generate data key". It is the key the gateway seals the same scope's Ingest
turns with (the session's, else the user's), made on first use and again after a Forget destroyed it; the rights
are Ingest's. ``valid_until`` bounds how long the publisher may keep it: a Forget in between destroys it, and a
turn sealed with it afterwards opens for no one (forgotten with its user)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from acm.domain.models import utcnow
from acm.domain.scope import Scope
from acm.sealing import DataKey, Keyring, key_owner
from acm_gateway.errors import Unavailable


@dataclass(frozen=True, slots=True)
class SealingKey:
    key: DataKey
    valid_until: datetime


@dataclass
class IssueSealingKey:
    """``keyring``: the data keys the gateway's bus seals with (None: this gateway does not seal); ``ttl_s``: how
    long a publisher may keep a key (ACM_SEALING_KEY_TTL_S)."""

    keyring: Keyring | None
    ttl_s: float
    now: Callable[[], datetime] = utcnow

    async def __call__(self, scope: Scope) -> SealingKey:
        """The key to seal ``scope``'s turns with; call it once the caller is authorised for Ingest in ``scope``."""
        if self.keyring is None:
            raise Unavailable("this gateway does not seal the bus, so it has no data key to give")
        key = await self.keyring.current(key_owner(scope))
        return SealingKey(key, self.now() + timedelta(seconds=self.ttl_s))
