"""Periodic bursts in a binned rate series, and whether one class's bursts meet another's peaks.

`period(series)`: the autocorrelation of the series (mean removed, computed with an FFT) normalised to 1 at lag 0;
the period is the lag of its highest value beyond the first lag where it falls below zero (a burst's own width
keeps it positive until then) and at most half the series (two periods at least). `strength` is the
autocorrelation there: near 1 for a strict burst train, near 0 for noise. A series with fewer than `MIN_BINS`
bins, a steady one (fewer than two bins below half its maximum) or one never falling below zero has no period.

`peaks(series)`: the bins at or above half the series' maximum (the bursts). `coincidence(a, b)`: the fraction of
`a`'s bursts that have a burst of `b` in the same bin or a neighbouring one.
"""

from __future__ import annotations

import numpy as np

MIN_BINS = 8


def period(series: np.ndarray) -> tuple[int, float] | None:
    """(lag in bins, strength) of the strongest repetition, None when there is none."""
    x = np.asarray(series, dtype=float)
    n = len(x)
    if n < MIN_BINS or not np.any(x) or np.count_nonzero(x < 0.5 * x.max()) < 2:
        return None  # too short, empty, or steady (no troughs between bursts)
    x = x - x.mean()
    energy = float(np.dot(x, x))
    if energy <= 0:
        return None
    size = 1 << int(2 * n - 1).bit_length()
    spectrum = np.fft.rfft(x, size)
    acf = np.fft.irfft(spectrum * np.conj(spectrum), size)[:n] / energy
    below = np.flatnonzero(acf[1:] < 0)
    if not len(below):
        return None
    start = int(below[0]) + 1
    stop = n // 2
    if start >= stop:
        return None
    lag = start + int(np.argmax(acf[start:stop + 1]))
    return lag, float(acf[lag])


def peaks(series: np.ndarray) -> np.ndarray:
    x = np.asarray(series, dtype=float)
    if not len(x) or x.max() <= 0:
        return np.zeros(len(x), dtype=bool)
    return x >= 0.5 * x.max()


def coincidence(a: np.ndarray, b: np.ndarray) -> float | None:
    """Fraction of the bursts of `a` (a peaks() mask) with a burst of `b` within one bin; None without bursts."""
    if not a.any():
        return None
    near = b.copy()
    near[1:] |= b[:-1]
    near[:-1] |= b[1:]
    return float((a & near).sum() / a.sum())
