"""What one input may cost this process at most: the bounds a hostile or broken device, file or capture meets.

Each is a setting: the configuration file's `limits:` section (rdmatool.config, checked there: a whole number
within its range, FILE:LINE otherwise) overrides the default below for the run. The defaults hold real inputs with
a wide margin; they exist so that one device printing without end, or one capture of a million flows, fails alone
and named instead of taking the collector's memory (see docs/security.md, "Bounds").
"""

from __future__ import annotations

MIB = 1024 * 1024

# key -> (default, lowest, highest). A real host's snapshot is a few MB and some 20,000 lines even with eight NICs
# (a large subnet's iblinkinfo some 50,000), a switch's show commands about as much; a host's real traffic is a few
# thousand queue pairs; a million packets is minutes of a busy RoCE class at the default snap length.
RANGES: dict[str, tuple[int, int, int]] = {
    "snapshot_bytes": (32 * MIB, 1 * MIB, 1024 * MIB),  # what one host or switch may send for one snapshot
    "snapshot_lines": (1_000_000, 10_000, 50_000_000),
    "pcap_flows": (50_000, 100, 5_000_000),  # flows kept one by one; the rest counted as other flows
    "capture_packets": (1_000_000, 1_000, 50_000_000),  # the largest `capture --max-packets` accepted
    # outputs of one target in one snapshot of a bundle (a pack's header entries, a folder's output files): a host
    # has some 150 with eight NICs and its perftest peers, a switch some 500 with per-port commands
    "target_outputs": (10_000, 100, 1_000_000),
    # seconds one InfiniBand subnet's sweep may take in a snapshot, every host tried included (rdmatool.collect):
    # its four tools read a fabric of a few thousand ports in well under a minute at the per-MAD timeout of
    # commands.SUBNET_MAD_TIMEOUT_MS; a sweep cut by it is kept and named partial
    "subnet_sweep_s": (60, 1, 3600),
}
DEFAULTS: dict[str, int] = {key: default for key, (default, _, _) in RANGES.items()}

_active: dict[str, int] = dict(DEFAULTS)


def value(key: str) -> int:
    """The bound in effect for this run."""
    return _active[key]


def configure(values: dict[str, int]) -> None:
    """The run's bounds: the defaults, overridden by `values` (already checked by rdmatool.config)."""
    _active.clear()
    _active.update(DEFAULTS)
    _active.update(values)


def problem(key: str, given: object) -> str | None:
    """What is wrong with `given` as the bound `key`, None when it is a whole number within the key's range."""
    _, low, high = RANGES[key]
    if isinstance(given, bool) or not isinstance(given, int) or not low <= given <= high:
        return f"a whole number from {low} to {high}"
    return None
