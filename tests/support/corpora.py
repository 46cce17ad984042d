"""What the safety corpora's tests share: reading a corpus, regenerating it from its generator, the shares every
hold-out keeps, and label checks written apart from acm.domain.pii (a corpus must not be checked by the rules it
measures)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from acm_benchmarks.safety import DATA


def read(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text("utf-8").splitlines() if line]


def assert_regenerates(generator: str, names: tuple[str, ...], tmp_path: Path) -> None:
    """``generator`` (a file under DATA with ``main(out_dir)``) writes ``names`` byte for byte as committed."""
    spec = importlib.util.spec_from_file_location(generator.removesuffix(".py"), DATA / generator)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    for name in names:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def assert_holdout_shares(pii: list[dict[str, Any]], inj: list[dict[str, Any]]) -> None:
    """At least 300 lines each, 35-45 % negatives, and at least 30 % of the lines in each of English and Chinese."""
    assert len(pii) >= 300 and len(inj) >= 300
    for lines, is_neg in ((pii, lambda ln: not ln["spans"]), (inj, lambda ln: not ln["injection"])):
        share = sum(1 for ln in lines if is_neg(ln)) / len(lines)
        assert 0.35 <= share <= 0.45, share
        for lang in ("en", "zh"):
            assert sum(1 for ln in lines if ln["lang"] == lang) >= 0.3 * len(lines), lang


def luhn(num: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(num)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def iban_ok(value: str) -> bool:
    raw = value.replace(" ", "").upper()
    return int("".join(str(int(c, 36)) for c in raw[4:] + raw[:4])) % 97 == 1


def cn_id_ok(value: str) -> bool:
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return "10X98765432"[sum(int(c) * w for c, w in zip(value[:17], weights, strict=True)) % 11] == value[17]
