"""Periodic bursts in a binned rate series, and whether one class's bursts meet another's peaks.

`period(series)` (`periods(rows)`: of each row of a matrix at once): the autocorrelation of the series (mean
removed, computed with an FFT) normalised to 1 at lag 0; the period is the lag of its highest value beyond the
first lag where it falls below zero (a burst's own width keeps it positive until then) and at most half the series
(two periods at least). `strength` is the autocorrelation there: near 1 for a strict burst train, near 0 for noise.
A series with fewer than `MIN_BINS` bins, a steady one (fewer than two bins below half its maximum) or one never
falling below zero has no period.

`peaks(series)`: the bins at or above half the series' maximum (the bursts). `coincidence(a, b)`: the fraction of
`a`'s bursts that have a burst of `b` in the same bin or a neighbouring one.
"""

from __future__ import annotations

import numpy as np

MIN_BINS = 8


def period(series: np.ndarray) -> tuple[int, float] | None:
    """(lag in bins, strength) of the strongest repetition, None when there is none."""
    x = np.asarray(series, dtype=float)
    if len(x) < MIN_BINS or not np.any(x) or np.count_nonzero(x < 0.5 * x.max()) < 2:
        return None  # too short, empty, or steady (no troughs between bursts)
    lags, strengths = periods(x[None, :])
    return (int(lags[0]), float(strengths[0])) if lags[0] > 0 else None


def periods(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The autocorrelation's period of each row of a matrix of series at once (one FFT for all: a watch judges
    hundreds of busy series an interval): (lags, strengths), lag 0 and strength -inf where a row has none (flat,
    never below zero, or its first fall below zero past half the row). `period` adds the checks of one series."""
    x = np.asarray(rows, dtype=float)
    count, n = x.shape
    lags, strengths = np.zeros(count, dtype=np.int64), np.full(count, -np.inf)
    if not count or n < 2:
        return lags, strengths
    centred = x - x.mean(axis=1, keepdims=True)
    energy = np.einsum("ij,ij->i", centred, centred)
    size = 1 << int(2 * n - 1).bit_length()
    spectrum = np.fft.rfft(centred, size, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        acf = np.fft.irfft(spectrum * np.conj(spectrum), size, axis=1)[:, :n] / energy[:, None]
    below = acf[:, 1:] < 0
    start = np.where(below.any(axis=1), np.argmax(below, axis=1) + 1, n)  # the first lag below zero
    stop = n // 2
    inside = (np.arange(n)[None, :] >= start[:, None]) & (np.arange(n)[None, :] <= stop)
    masked = np.where(inside, acf, -np.inf)
    best = np.argmax(masked, axis=1)
    ok = (energy > 0) & (start < stop)
    lags[ok] = best[ok]
    strengths[ok] = masked[ok, best[ok]]
    return lags, strengths


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
