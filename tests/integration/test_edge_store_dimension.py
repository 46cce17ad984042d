"""A vector shard reopened for another embedding size: a ValueError naming both sizes (what acm reindex
takes as "reset the collection"), found from the shard's config rather than from a load error's text."""

from __future__ import annotations

from pathlib import Path

import pytest

from acm.adapters.edge_store import EdgeVectorStore


async def test_reopening_a_shard_for_another_dimension_is_a_value_error(tmp_path: Path) -> None:
    first = EdgeVectorStore(tmp_path / "edge")
    await first.ensure(8)
    await first.close()
    again = EdgeVectorStore(tmp_path / "edge")
    try:
        with pytest.raises(ValueError, match="holds 8-d vectors, not 16-d"):
            await again.ensure(16)
        await again.ensure(8)  # the same size opens it
    finally:
        await again.close()
