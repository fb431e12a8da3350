"""Timing shared by the benchmarks: medians of repeated runs and percentiles of samples."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_time(
    run: Callable[[], object], repeat: int, prepare: Callable[[], object] | None = None
) -> float:
    """The median wall time of ``repeat`` runs of ``run``; ``prepare`` runs untimed before each."""
    times = []
    for _ in range(repeat):
        if prepare is not None:
            prepare()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def percentile(values: list[float], share: float) -> float:
    """The sample at ``share`` (0 to 1) of the sorted ``values``, the nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]
