"""The bundles the nccl tests read: a generated RoCE fleet of two rails and a generated InfiniBand fleet (written once
per session), and the variants a test makes of them (one host's RoCE v2 IPv4 GID at another index)."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.generated.bundle_writer import write
from tests.generated.generate import generate

ROCE_SEED, IB_SEED = 3, 2  # seed 3: 3 hosts x 2 RoCE rails, site 4/34; seed 2: 7 hosts x 1 InfiniBand rail, site 3/26


def written(seed: int, link_layer: str, root: Path):
    fabric = generate(seed, link_layer=link_layer)
    return fabric, write(fabric, root / f"fabric-{seed}")


def with_gid_moved(bundle: Path, root: Path, host: str, device: str, index: int) -> Path:
    """A copy of the bundle in which `host`'s RoCE v2 IPv4 GID of `device` sits at `index` (the rows before it
    filled with link-local RoCE v2 rows), in every snapshot: what an extra address on one rail does to its table."""
    copy = root / f"{bundle.name}-gid-{host}"
    shutil.copytree(bundle, copy)
    (copy / "samples.npz").unlink(missing_ok=True)  # the stored samples would be stale
    for path in copy.glob(f"snapshots/*/{host}/show_gids.txt"):
        out = []
        for line in path.read_text().splitlines():
            cells = line.split("\t")
            if cells[0] == device and len(cells) > 3 and cells[2].isdigit() and cells[-2] == "v2" and "." in line:
                for filler in range(4, index):
                    out.append("\t".join([device, cells[1], str(filler), "fe80:0000:0000:0000:0e42:a1ff:fe99:0001",
                                          "\t", "v2", cells[-1]]))
                cells[2] = str(index)
                line = "\t".join(cells)
            out.append(line)
        path.write_text("\n".join(out) + "\n")
    return copy


def with_trust_pcp(bundle: Path, root: Path, host: str) -> Path:
    """A copy of the bundle in which `host`'s RoCE ports trust PCP: the DSCP NCCL_IB_TC sets chooses nothing."""
    copy = root / f"{bundle.name}-pcp-{host}"
    shutil.copytree(bundle, copy)
    (copy / "samples.npz").unlink(missing_ok=True)
    for path in copy.glob(f"snapshots/*/{host}/mlnx_qos.*.txt"):
        path.write_text(path.read_text().replace("Priority trust state: dscp", "Priority trust state: pcp"))
    return copy
