"""matplotlib for the benchmarks' plots: optional (a plot is skipped, not an error, when it is missing), without
a display, and quiet."""

from __future__ import annotations

import logging
from types import ModuleType


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
