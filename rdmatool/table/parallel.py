"""Shares of one CPU-bound job on every core, for the diagnosis of big bundles on small machines.

Workers are forked: they inherit the inputs (a bundle's 20,000 outputs, a 700,000-row facts table) instead of
receiving them pickled, and only their results travel back. The parent takes the first share itself. A process
with other threads never forks (a fork copies locks those threads may hold), and a worker that dies has its share
redone in the parent — so the result never depends on whether, or how, the work was shared.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

S = TypeVar("S")
R = TypeVar("R")

_TASK: tuple[Callable, Sequence] | None = None  # what forked workers run: inherited, never pickled


def workers(size: int, minimum: int) -> int:
    """How many processes `size` units of work deserve: 1 below `minimum`, or when forking is not safe here."""
    if size < minimum or threading.active_count() > 1 or "fork" not in multiprocessing.get_all_start_methods():
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def fork_map(fn: Callable[[S], R], shares: Sequence[S]) -> list[R]:
    """[fn(share) for share in shares], the shares after the first computed in forked workers."""
    global _TASK
    if len(shares) < 2:
        return [fn(share) for share in shares]
    _TASK = (fn, shares)
    try:
        with ProcessPoolExecutor(len(shares) - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            futures = [pool.submit(_run_share, k) for k in range(1, len(shares))]
            results = [fn(shares[0])]
            for k, future in enumerate(futures, start=1):
                try:
                    results.append(future.result())
                except Exception:  # a worker that died (memory, a signal) or failed: its share is redone here
                    results.append(fn(shares[k]))
    except OSError:  # no processes to be had
        results = [fn(share) for share in shares]
    finally:
        _TASK = None
    return results


def _run_share(k: int):
    fn, shares = _TASK
    return fn(shares[k])
