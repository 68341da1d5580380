"""One storage run with its counters, as `rdmatool perf run --mode storage` and the gate's storage stage both make it:
the storage nodes' clients spread over all their NICs (rdmatool.perf.storage.with_nics), the storage nodes, their
clients and their switches read once before the reads and once after (rdmatool.perf.load_reads), the rounds run,
and the figures: per node and for the fleet (rdmatool.perf.storage), and what the reads did to the compute class's
pause counters (rdmatool.perf.storage_pauses). The facts of both are what the storage rules judge.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rdmatool import files
from rdmatool.model import Target
from rdmatool.perf import load_reads, storage, storage_pauses
from rdmatool.perf.incast import Group
from rdmatool.perf.model import PairResult


@dataclass
class StorageRun:
    rounds: list[list[Group]]
    results: list[PairResult]
    figures: dict
    pauses: dict | None = None  # None: the counters were not read (no read options, or a read failed)
    rows: list[dict] = field(default_factory=list)

    def record(self) -> dict:
        return {"rounds": [[g.as_dict() for g in r] for r in self.rounds], "figures": self.figures,
                "pauses": self.pauses, "results": [r.as_dict() for r in self.results], "facts": self.rows}

    def write(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        files.write_atomic(path, (json.dumps(self.record(), indent=1, default=str) + "\n").encode())


def _read(targets: list[Target], read_options, folder: Path) -> str | None:  # noqa: ANN001 - CollectOptions
    """One read of the counters; None when it breaks: the reads' figures stand without the pause figures."""
    try:
        return load_reads.read(targets, read_options, folder)
    except Exception:  # noqa: BLE001 - a read that fails loses the pause figures, never the storage run
        return None


def measure(session, rounds: list[list[Group]], *, targets: Iterable[Target] = (), links: Iterable = (),  # noqa: ANN001 - a PerfSession
            read_options=None, folder: Path | None = None, priority: int = 3, reference: float | None = None,  # noqa: ANN001 - CollectOptions
            slow_share: float = storage.SLOW_SHARE_OF_MEDIAN, cabling: Mapping[str, tuple[str, str]] | None = None,
            roles: Mapping[str, str | None] | None = None, deadline: float | None = None) -> StorageRun:
    """The rounds (spread over every NIC of each storage node) between two reads of the counters (`read_options`
    and `folder` given: `folder`/before and `folder`/after), the figures, and the facts of both for the rules.
    `priority`: the compute class's (the site's RoCE priority)."""
    rounds = storage.with_nics(rounds, session.rails)
    nodes = [g.receiver for r in rounds for g in r]
    names = set(nodes) | {c for r in rounds for g in r for c in g.senders}
    read = load_reads.members(targets, names, links) if read_options is not None and folder is not None else []
    before = _read(read, read_options, folder / "before") if read else None
    results = storage.run(session, rounds, deadline)
    after = _read(read, read_options, folder / "after") if read and before else None
    whole, per_nic = storage.line_rates(session)
    figures = storage.figures(rounds, results, whole, reference, slow_share, per_nic)
    rows = storage.facts(figures, session.devices, cabling, roles)
    pauses = None
    if before and after:
        from rdmatool.table.analysis import analyse_path

        netdevs = {n: s.info.netdev for n, s in session.hosts.items() if s.info is not None}
        pauses = storage_pauses.figures(analyse_path(before), analyse_path(after), nodes,
                                        {t.name: t.kind.value for t in read}, priority,
                                        float(session.options.duration_s) * len(rounds), netdevs)
        rows += storage_pauses.facts(pauses, roles)
    return StorageRun(rounds, results, figures, pauses, rows)
