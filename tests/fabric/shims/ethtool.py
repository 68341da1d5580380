"""ethtool shim: `ethtool -S <if>` (mlx5 names), `ethtool -i <if>`, `ethtool <if>`, `ethtool --show-fec <if>`."""

from __future__ import annotations

from tests.fabric.counters import ETHTOOL_COUNTERS
from tests.fabric.shims._base import Ctx, err

IPOIB = ("rx_packets", "tx_packets", "rx_bytes", "tx_bytes", "rx_csum_complete", "tx_queue_dropped")


def stats(ctx: Ctx, nic: dict) -> str:
    p = nic["ports"][0]
    if "eth" not in p["counters"]:  # IPoIB netdev: a short software-counter list
        c = p["counters"]["ib"]
        return "NIC statistics:\n" + "".join(
            f"     {n}: {ctx.val(c, 'port_rcv_packets') // 1000 if n.endswith('packets') else 0}\n" for n in IPOIB)
    c = p["counters"]["eth"]
    return "NIC statistics:\n" + "".join(f"     {n}: {ctx.val(c, n)}\n" for n in ETHTOOL_COUNTERS)


def info(nic: dict, index: int) -> str:
    driver = "mlx5_core" if nic["link_layer"] == "Ethernet" else "mlx5_core[ib_ipoib]"
    return (f"driver: {driver}\nversion: 23.10-1.1.9\nfirmware-version: {nic['firmware']} ({nic['board_id']})\n"
            f"expansion-rom-version: \nbus-info: 0000:{0x17 + index:02x}:00.0\nsupports-statistics: yes\n"
            "supports-test: yes\nsupports-eeprom-access: no\nsupports-register-dump: no\n"
            "supports-priv-flags: yes\n")


def settings(nic: dict) -> str:
    p = nic["ports"][0]
    up = p["state"] == "Active"
    speed = f"{p['rate_gbps'] * 1000}Mb/s" if up else "Unknown!"
    lanes = p["width"].rstrip("X")
    return (f"Settings for {nic['netdev']}:\n"
            "\tSupported ports: [ Backplane ]\n"
            "\tSupports auto-negotiation: Yes\n"
            "\tAdvertised auto-negotiation: Yes\n"
            f"\tSpeed: {speed}\n"
            f"\tLanes: {lanes}\n"
            f"\tDuplex: {'Full' if up else 'Unknown! (255)'}\n"
            "\tAuto-negotiation: on\n"
            "\tPort: Direct Attach Copper\n"
            "\tPHYAD: 0\n"
            "\tTransceiver: internal\n"
            f"\tLink detected: {'yes' if up else 'no'}\n")


def main(ctx: Ctx, argv: list[str]) -> int:
    if not argv:
        return err("ethtool: bad command line argument(s)\nFor more information run ethtool -h", 1)
    opt = argv[0] if argv[0].startswith("-") else None
    ifname = argv[1] if opt and len(argv) > 1 else argv[0]
    nic = ctx.nic(netdev=ifname)
    if nic is None:
        if opt in (None, "--show-fec"):
            return err("netlink error: no device matches name (offset 24)\nnetlink error: No such device", 71)
        return err("Cannot get driver information: No such device", 71)
    index = ctx.spec["nics"].index(nic)
    if opt in ("-S", "--statistics"):
        print(stats(ctx, nic), end="")
    elif opt in ("-i", "--driver"):
        print(info(nic, index), end="")
    elif opt == "--show-fec":
        print(f"FEC parameters for {ifname}:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS")
    elif opt is None:
        print(settings(nic), end="")
    else:
        return err(f"ethtool: option {opt} is not supported by this simulator", 1)
    return 0
