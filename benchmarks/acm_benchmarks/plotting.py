"""matplotlib for the benchmarks' plots: optional (a plot is skipped, not an error, when it is missing), without
a display, and quiet."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any


def pyplot() -> ModuleType | None:
    """matplotlib.pyplot on the Agg backend, or None when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # no display needed
    logging.getLogger("matplotlib").setLevel(logging.WARNING)
    import matplotlib.pyplot as plt

    return plt


def save_result(
    result: Mapping[str, Any],
    json_out: Path | None,
    plot_out: Path | None,
    draw: Callable[[Mapping[str, Any], Path], bool],
) -> list[Path]:
    """A benchmark's result as JSON at ``json_out`` and its plot, drawn from the result alone, at ``plot_out``
    (each when given); returns the paths written."""
    written: list[Path] = []
    if json_out:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        written.append(json_out)
    if plot_out and draw(result, plot_out):
        written.append(plot_out)
    return written
