"""The generated code in libs/acm/v1 must match what `make proto` makes from protos/acm/v1."""

from pathlib import Path

from acm.protogen import generate

ROOT = Path(__file__).resolve().parents[2]


def test_generated_code_matches_protos(tmp_path: Path) -> None:
    fresh = generate(ROOT / "protos", tmp_path)
    committed_dir = ROOT / "libs"
    stale = []
    for path in fresh:
        rel = path.relative_to(tmp_path)
        committed = committed_dir / rel
        if not committed.exists() or committed.read_bytes() != path.read_bytes():
            stale.append(str(rel))
    assert not stale, f"generated code is out of date, run `make proto`: {stale}"
