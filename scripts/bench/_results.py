"""How a benchmark script writes its results file: the figures plus the command and the time that produced
them, so a committed number can always be traced to a run."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def write_results(out: Path, figures: dict[str, Any]) -> None:
    """`figures` with "command" (this script and its arguments) and "measured_at" first, as indented JSON."""
    script = Path(sys.argv[0])
    record = {
        "command": " ".join(["python", f"scripts/bench/{script.name}", *sys.argv[1:]]),
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        **figures,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {out}", file=sys.stderr)
