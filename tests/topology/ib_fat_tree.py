"""A two-level InfiniBand fat tree as its subnet sweep prints it (ibnetdiscover -p, iblinkinfo, ibqueryerrors,
sminfo), one text per tool and snapshot, in the layouts of tests/fixtures/parsers/<tool>/*.txt. Faults per
snapshot: counters on switch ports, a cable gone, a narrow link, the subnet managers' states. Pure: no I/O.

Leaves carry `hosts_per_leaf` hosts and `uplinks` uplinks each, spread over the spines round robin.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from rdmatool.bundle import BundleWriter
from rdmatool.model import CommandResult, Target

LANE = {"NDR": "106.25", "HDR": "53.125", "EDR": "25.78125"}


@dataclass
class Tree:
    hosts: list[str]
    leaves: list[str]
    spines: list[str]
    ports: int = 64
    speed: str = "NDR"
    # (switch, port) ↔ (switch or `<host> mlx5_0`, port): each cable once, switch first
    cables: list[tuple[tuple[str, int], tuple[str, int]]] = field(default_factory=list)

    def guid(self, node: str) -> str:
        return f"0x{0xb83fd20300000000 + self.index[node]:016x}"

    def lid(self, node: str) -> int:
        return self.index[node]

    def desc(self, node: str) -> str:
        return f"MF0;{node}:MQM9790/U1" if node in self.switches else node

    def __post_init__(self) -> None:
        self.switches = set(self.leaves) | set(self.spines)
        names = [*self.leaves, *self.spines, *(f"{h} mlx5_0" for h in self.hosts)]
        self.index = {n: i + 1 for i, n in enumerate(names)}


def fat_tree(hosts: int, hosts_per_leaf: int, uplinks: int, spines: int, seed: int = 1) -> Tree:
    """A fat tree of random names (seeded)."""
    rng = random.Random(seed)
    site = "".join(rng.choice("abcdefghkmnpqrstuvwxyz") for _ in range(3))
    names = [f"{site}{rng.randrange(10, 99)}-n{i:04d}" for i in range(hosts)]
    n_leaves = -(-hosts // hosts_per_leaf)
    leaves = [f"{site}-leaf{i:03d}" for i in range(n_leaves)]
    spine_names = [f"{site}-spine{i:02d}" for i in range(spines)]
    tree = Tree(names, leaves, spine_names)
    used = {s: 0 for s in spine_names}
    for i, leaf in enumerate(leaves):
        for k, host in enumerate(names[i * hosts_per_leaf:(i + 1) * hosts_per_leaf]):
            tree.cables.append(((leaf, k + 1), (f"{host} mlx5_0", 1)))
        for j in range(uplinks):
            spine = spine_names[(i * uplinks + j) % spines]
            used[spine] += 1
            tree.cables.append(((leaf, hosts_per_leaf + j + 1), (spine, used[spine])))
    tree.ports = max(64, hosts_per_leaf + uplinks, *used.values())
    return tree


@dataclass
class Faults:
    """One snapshot's faults: counters (switch, port) → {printed counter name: value}; cables gone; links narrow
    (cable end → width); subnet managers (state numbers)."""

    counters: dict = field(default_factory=dict)
    gone: set = field(default_factory=set)
    narrow: dict = field(default_factory=dict)
    sms: tuple = (3,)


def _ends(tree: Tree, faults: Faults) -> dict[tuple[str, int], tuple[str, int, str]]:
    """Each cabled end → (far node, far port, width), both directions, without the cables gone."""
    out = {}
    for one, two in tree.cables:
        if one in faults.gone or two in faults.gone:
            continue
        width = faults.narrow.get(one) or faults.narrow.get(two) or "4x"
        out[one] = (*two, width)
        out[two] = (*one, width)
    return out


def ibnetdiscover(tree: Tree, faults: Faults) -> str:
    ends = _ends(tree, faults)
    lines = []
    for sw in [*tree.leaves, *tree.spines]:
        for port in range(1, tree.ports + 1):
            head = f"SW {tree.lid(sw):5d} {port:2d} {tree.guid(sw)}"
            far = ends.get((sw, port))
            if far is None:
                lines.append(f"{head} 4x ???                                    '{tree.desc(sw)}'")
                continue
            node, number, width = far
            kind = "SW" if node in tree.switches else "CA"
            lines.append(f"{head} {width} {tree.speed} - {kind} {tree.lid(node):5d} {number:2d} {tree.guid(node)} "
                         f"( '{tree.desc(sw)}' - '{tree.desc(node)}' )")
    for host in tree.hosts:
        ca = f"{host} mlx5_0"
        far = ends.get((ca, 1))
        if far is not None:
            node, number, width = far
            lines.append(f"CA {tree.lid(ca):5d}  1 {tree.guid(ca)} {width} {tree.speed} - SW {tree.lid(node):5d} "
                         f"{number:2d} {tree.guid(node)} ( '{ca}' - '{tree.desc(node)}' )")
    return "\n".join(lines) + "\n"


def iblinkinfo(tree: Tree, faults: Faults) -> str:
    ends = _ends(tree, faults)
    lane = LANE[tree.speed]
    lines = []
    for sw in [*tree.leaves, *tree.spines]:
        lines.append(f"Switch: {tree.guid(sw)} {tree.desc(sw)}:")
        for port in range(1, tree.ports + 1):
            far = ends.get((sw, port))
            head = f"     {tree.lid(sw):5d} {port:4d}[  ]"
            if far is None:
                lines.append(f'{head} ==(                Down/ Polling)==>             [  ] "" ( )')
                continue
            node, number, width = far
            lines.append(f"{head} ==( {width[0]}X {lane:>14} Gbps Active/  LinkUp)==> {tree.lid(node):6d} "
                         f'{number:4d}[  ] "{tree.desc(node)}" ( )')
    return "\n".join(lines) + "\n"


_WIDE = {"PortXmitWait", "PortXmitData", "PortRcvData"}


def ibqueryerrors(tree: Tree, faults: Faults) -> str:
    lines = []
    by_switch: dict[str, list] = {}
    for (sw, port), counters in sorted(faults.counters.items()):
        by_switch.setdefault(sw, []).append((port, counters))
    for sw, ports in by_switch.items():
        lines.append(f'Errors for {tree.guid(sw)} "{tree.desc(sw)}"')
        for port, counters in ports:
            items = " ".join(f"[{name} == {value}" + (f" ({value / 1e9:.3f}G)]" if name in _WIDE else "]")
                             for name, value in counters.items())
            lines.append(f"   GUID {tree.guid(sw)} port {port}: {items}")
    n_switches = len(tree.leaves) + len(tree.spines)
    lines += ["", f"## Summary: {n_switches + len(tree.hosts)} nodes checked, {len(by_switch)} bad nodes found",
              f"##          {n_switches * tree.ports + len(tree.hosts)} ports checked, "
              f"{len(faults.counters)} ports have errors beyond threshold", "## (null)", "## Suppressed:"]
    return "\n".join(lines) + "\n"


def sminfo(tree: Tree, faults: Faults) -> str:
    words = {0: "SMINFO_NOTACT", 1: "SMINFO_DISCOVER", 2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}
    spine = tree.spines[0]
    return "".join(f"sminfo: sm lid {tree.lid(spine) + k * 1000} sm guid 0x{0xb83fd203001a0000 + k:016x}, "
                   f"activity count {1000 + k} priority {15 - k} state {state} {words[state]}\n"
                   for k, state in enumerate(faults.sms))


TOOLS = {"ibnetdiscover": ibnetdiscover, "iblinkinfo": iblinkinfo, "ibqueryerrors": ibqueryerrors, "sminfo": sminfo}
T0 = "2026-12-01T02:00:{:02d}+00:00"


def write_bundle(path, tree: Tree, snapshots: list[Faults], sweeper: str | None = None,
                 extra: dict | None = None, before_commit=None):
    """A bundle whose first host (`sweeper`) holds the sweep of each snapshot (qualifier mlx5_0.1), 10 s apart;
    `extra`: (host, parser) → [stdout per snapshot] of other outputs; `before_commit` as BundleWriter.commit takes
    it (the samples store written at commit). Returns the bundle's path."""
    writer = BundleWriter(path)
    sweeper = sweeper or tree.hosts[0]
    for snapshot, faults in enumerate(snapshots):
        for parser, render in TOOLS.items():
            writer.add(snapshot, CommandResult(target=sweeper, parser=parser, command=parser, stdout=render(tree, faults),
                                               qualifier="mlx5_0.1", started=T0.format(10 * snapshot), duration_s=0.5))
        for (host, parser), outputs in (extra or {}).items():
            writer.add(snapshot, CommandResult(target=host, parser=parser, command=parser, stdout=outputs[snapshot],
                                               started=T0.format(10 * snapshot), duration_s=0.1))
    hosts = sorted({sweeper, *(h for h, _ in (extra or {}))})
    return writer.commit([Target(h, "127.0.0.1") for h in hosts],
                         [{"index": i, "started": T0.format(10 * i)} for i in range(len(snapshots))], [], 10.0,
                         before_commit=before_commit)
