"""Render a target's fake kernel files: the static /sys/class tree (once, at fabric start) and the
time-dependent counter files, /proc/loadavg and /proc/pressure (per connection). Stdlib only.

`dynamic()` returns the (source, mount point) pairs that the wrapper bind-mounts inside the session's private
mount namespace, over the static tree already mounted on /sys/class.
"""

from __future__ import annotations

import os
import time

from tests.fabric.counters import HW_COUNTERS, IB_COUNTERS, value

STATE_NUM = {"Down": 1, "Initializing": 2, "Armed": 3, "Active": 4}
PHYS_NUM = {"Sleep": 1, "Polling": 2, "Disabled": 3, "LinkUp": 5, "LinkErrorRecovery": 6}


def _write(path, text: str) -> None:  # path: pathlib.Path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text.endswith("\n") else text + "\n")


def sys_rate(port: dict) -> str:
    return f"{port['rate_gbps']} Gb/sec ({port['width']} {port['speed']})"


def static(spec: dict, root) -> None:  # root: pathlib.Path
    """Write the static part of /sys/class for a host (infiniband/, net/) or a Linux switch (net/ only)."""
    if spec["kind"] == "switch":
        for p in spec["ports"]:
            d = root / "net" / p["name"]
            _write(d / "operstate", "up" if p["up"] else "down")
            _write(d / "mtu", "9216")
            _write(d / "speed", str(p["speed_gbps"] * 1000))
        for name in ("eth0", "lo"):
            _write(root / "net" / name / "operstate", "up" if name == "eth0" else "unknown")
        return
    for nic in spec["nics"]:
        dev = root / "infiniband" / nic["device"]
        guid = nic["node_guid"]
        _write(dev / "fw_ver", nic["firmware"])
        _write(dev / "board_id", nic["board_id"])
        _write(dev / "hca_type", nic["hca_type"])
        _write(dev / "node_guid", ":".join(guid[i:i + 4] for i in range(0, 16, 4)))
        _write(dev / "sys_image_guid", ":".join(guid[i:i + 4] for i in range(0, 16, 4)))
        _write(dev / "node_type", "1: CA")
        (dev / "device" / "net" / nic["netdev"]).mkdir(parents=True, exist_ok=True)
        for p in nic["ports"]:
            pd = dev / "ports" / str(p["num"])
            _write(pd / "state", f"{STATE_NUM[p['state']]}: {p['state'].upper()}")
            _write(pd / "phys_state", f"{PHYS_NUM[p['phys_state']]}: {p['phys_state']}")
            _write(pd / "rate", sys_rate(p))
            _write(pd / "link_layer", nic["link_layer"])
            _write(pd / "lid", f"0x{p['lid']:x}")
            _write(pd / "sm_lid", f"0x{p['sm_lid']:x}")
            _write(pd / "lid_mask_count", "0")
            _write(pd / "cap_mask", "0x00010000" if nic["link_layer"] == "Ethernet" else "0xa751e848")
            for i, (gid, kind, _v4) in enumerate(p["gids"]):
                _write(pd / "gids" / str(i), gid)
                _write(pd / "gid_attrs" / "types" / str(i), kind)
                _write(pd / "gid_attrs" / "ndevs" / str(i), nic["netdev"] if nic["link_layer"] == "Ethernet" else "")
            (pd / "counters").mkdir(exist_ok=True)
            (pd / "hw_counters").mkdir(exist_ok=True)
        net = root / "net" / nic["netdev"]
        _write(net / "mtu", str(9000 if nic["ports"][0]["mtu"] >= 4096 else 1500)
               if nic["link_layer"] == "Ethernet" else "4092")
        _write(net / "operstate", "up" if nic["ports"][0]["state"] == "Active" else "down")
        _write(net / "address", nic["mac"])
        if nic["link_layer"] != "Ethernet":
            continue
        q = nic["qos"]
        for side, enabled in (("roce_np", q["np_enable"]), ("roce_rp", q["rp_enable"])):
            for prio in range(8):
                _write(net / "ecn" / side / "enable" / str(prio), "1" if prio in enabled else "0")
        np_dir = net / "ecn" / "roce_np"
        _write(np_dir / "cnp_dscp", str(q["cnp_dscp"]))
        _write(np_dir / "cnp_802p_prio", str(q["cnp_prio"]))
        _write(np_dir / "min_time_between_cnps", "4")
        rp = {"clamp_tgt_rate": 0, "clamp_tgt_rate_after_time_inc": 1, "dce_tcp_g": 1019, "dce_tcp_rtt": 1,
              "initial_alpha_value": 1023, "rate_reduce_monitor_period": 4, "rate_to_set_on_first_cnp": 0,
              "rpg_ai_rate": 5, "rpg_byte_reset": 32767, "rpg_gd": 11, "rpg_hai_rate": 50, "rpg_max_rate": 0,
              "rpg_min_dec_fac": 50, "rpg_min_rate": 1, "rpg_threshold": 1, "rpg_time_reset": 300}
        for k, v in rp.items():
            _write(net / "ecn" / "roce_rp" / k, str(v))
    for name in ("lo", "eth0"):
        _write(root / "net" / name / "operstate", "unknown" if name == "lo" else "up")


def dynamic(spec: dict, tmp: str, epoch: float, now: float | None = None) -> list[tuple[str, str]]:
    """Write the counter files and load figures as of `now` into the directory tmp; return the bind mounts.

    Plain os/open on purpose: this runs on every connection."""
    now = time.time() if now is None else now
    binds: list[tuple[str, str]] = []
    if spec["kind"] == "host":
        for nic in spec["nics"]:
            for p in nic["ports"]:
                base = f"/sys/class/infiniband/{nic['device']}/ports/{p['num']}"
                for sub, names, ns in (("counters", IB_COUNTERS, "ib"), ("hw_counters", HW_COUNTERS, "hw")):
                    d = f"{tmp}/{nic['device']}-{p['num']}-{sub}"
                    os.mkdir(d)
                    table = p["counters"][ns]
                    for n in names:
                        with open(f"{d}/{n}", "w") as f:
                            f.write(f"{value(table.get(n), now, epoch)}\n")
                    binds.append((d, f"{base}/{sub}"))
    up = now - epoch
    l1, l5, l15 = spec.get("load", [0.3, 0.3, 0.3])
    with open(f"{tmp}/loadavg", "w") as f:
        f.write(f"{l1:.2f} {l5:.2f} {l15:.2f} 2/{412 + int(up) % 37} {40000 + int(up * 3)}\n")
    binds.append((f"{tmp}/loadavg", "/proc/loadavg"))
    if os.path.isdir("/proc/pressure"):
        pd = f"{tmp}/pressure"
        os.mkdir(pd)
        io, cpu = spec.get("psi_io", 0.1), spec.get("psi_cpu", 0.5)
        for name, avg in (("io", io), ("cpu", cpu), ("memory", 0.0)):
            total = int(1_000_000 + avg * 10_000 * up)
            with open(f"{pd}/{name}", "w") as f:
                f.write(f"some avg10={avg:.2f} avg60={avg * 0.9:.2f} avg300={avg * 0.8:.2f} total={total}\n"
                        f"full avg10={avg / 2:.2f} avg60={avg * 0.45:.2f} avg300={avg * 0.4:.2f} total={total // 2}\n")
        binds.append((pd, "/proc/pressure"))
    return binds
