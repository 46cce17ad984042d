"""The gateway's Postgres pool is sized from its settings (ACM_DB_POOL_MIN / ACM_DB_POOL_MAX)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from acm.adapters.postgres_store import PostgresStore
from acm.bootstrap import open_relational
from tests.support.gateway import gateway_settings


async def test_the_postgres_pool_takes_its_sizes(postgres_dsn: str) -> None:
    settings = gateway_settings(postgres_dsn).model_copy(update={"db_pool_min": 2, "db_pool_max": 3})
    rel = await open_relational(postgres_dsn, 5.0, (settings.db_pool_min, settings.db_pool_max))
    try:
        store = rel._handle
        assert isinstance(store, PostgresStore)
        assert (store.pool.min_size, store.pool.max_size) == (2, 3)
    finally:
        await rel.close()


def test_a_pool_minimum_above_its_maximum_is_refused() -> None:
    with pytest.raises(ValidationError, match="ACM_DB_POOL_MIN must be at most ACM_DB_POOL_MAX"):
        gateway_settings("sqlite:///unused.db").model_validate(
            {**gateway_settings("sqlite:///unused.db").model_dump(), "db_pool_min": 5, "db_pool_max": 2}
        )
