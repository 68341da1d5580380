"""ibv_devinfo shim: `ibv_devinfo [-v] [-d <dev>] [-i <port>] [-l]`, rdma-core's tab layout."""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err

STATE = {"Active": ("PORT_ACTIVE", 4), "Down": ("PORT_DOWN", 1), "Initializing": ("PORT_INIT", 2),
         "Armed": ("PORT_ARMED", 3)}
PHYS = {"LinkUp": ("LINK_UP", 5), "Polling": ("POLLING", 2), "Disabled": ("DISABLED", 3), "Sleep": ("SLEEP", 1),
        "LinkErrorRecovery": ("LINK_ERROR_RECOVERY", 6)}
MTU = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
WIDTH = {"1X": 1, "4X": 2, "8X": 4, "12X": 8, "2X": 16}
SPEED = {"SDR": ("2.5 Gbps", 1), "QDR": ("10.0 Gbps", 4), "FDR": ("14.0 Gbps", 16), "EDR": ("25.0 Gbps", 32),
         "HDR": ("50.0 Gbps", 64), "NDR": ("100.0 Gbps", 128), "XDR": ("200.0 Gbps", 256)}
CAP_FLAGS = ("BAD_PKEY_CNTR", "BAD_QKEY_CNTR", "AUTO_PATH_MIG", "CHANGE_PHY_PORT", "PORT_ACTIVE_EVENT",
             "SYS_IMAGE_GUID", "RC_RNR_NAK_GEN", "MEM_WINDOW", "XRC", "MEM_MGT_EXTENSIONS", "MEM_WINDOW_TYPE_2B",
             "RAW_IP_CSUM", "MANAGED_FLOW_STEERING")


def guid(g: str) -> str:
    return ":".join(g[i:i + 4] for i in range(0, 16, 4))


def device(nic: dict, verbose: bool, only_port: int | None) -> str:
    eth = nic["link_layer"] == "Ethernet"
    out = [f"hca_id:\t{nic['device']}\n",
           "\ttransport:\t\t\tInfiniBand (0)\n",
           f"\tfw_ver:\t\t\t\t{nic['firmware']}\n",
           f"\tnode_guid:\t\t\t{guid(nic['node_guid'])}\n",
           f"\tsys_image_guid:\t\t\t{guid(nic['node_guid'])}\n",
           "\tvendor_id:\t\t\t0x02c9\n",
           f"\tvendor_part_id:\t\t\t{int(nic['hca_type'][2:])}\n",
           "\thw_ver:\t\t\t\t0x0\n",
           f"\tboard_id:\t\t\t{nic['board_id']}\n",
           f"\tphys_port_cnt:\t\t\t{len(nic['ports'])}\n"]
    if verbose:
        out += ["\tmax_mr_size:\t\t\t0xffffffffffffffff\n", "\tpage_size_cap:\t\t\t0xfffffffffffff000\n",
                "\tmax_qp:\t\t\t\t131072\n", "\tmax_qp_wr:\t\t\t32768\n",
                "\tdevice_cap_flags:\t\t0x25a1bc36\n"]
        out += [f"\t\t\t\t\t{f}\n" for f in CAP_FLAGS]
        out += ["\tmax_sge:\t\t\t30\n", "\tmax_cq:\t\t\t\t16777216\n", "\tmax_cqe:\t\t\t4194303\n",
                "\tmax_mr:\t\t\t\t16777216\n", "\tmax_pd:\t\t\t\t8388608\n", "\tmax_qp_rd_atom:\t\t\t16\n",
                "\tatomic_cap:\t\t\tATOMIC_HCA (1)\n", "\tmax_pkeys:\t\t\t128\n",
                "\tlocal_ca_ack_delay:\t\t16\n", "\tnum_comp_vectors:\t\t63\n"]
    for p in nic["ports"]:
        if only_port not in (None, p["num"]):
            continue
        state, snum = STATE[p["state"]]
        out += [f"\t\tport:\t{p['num']}\n",
                f"\t\t\tstate:\t\t\t{state} ({snum})\n",
                "\t\t\tmax_mtu:\t\t4096 (5)\n",
                f"\t\t\tactive_mtu:\t\t{p['mtu']} ({MTU[p['mtu']]})\n",
                f"\t\t\tsm_lid:\t\t\t{0 if eth else p['sm_lid']}\n",
                f"\t\t\tport_lid:\t\t{0 if eth else p['lid']}\n",
                "\t\t\tport_lmc:\t\t0x00\n",
                f"\t\t\tlink_layer:\t\t{nic['link_layer']}\n"]
        if verbose:
            phys, pnum = PHYS[p["phys_state"]]
            speed, spnum = SPEED[p["speed"]]
            out += ["\t\t\tmax_msg_sz:\t\t0x40000000\n",
                    f"\t\t\tport_cap_flags:\t\t{'0x04010000' if eth else '0xa751e848'}\n",
                    "\t\t\tport_cap_flags2:\t0x0000\n",
                    "\t\t\tmax_vl_num:\t\tinvalid value (0)\n" if eth else "\t\t\tmax_vl_num:\t\t4 (3)\n",
                    "\t\t\tbad_pkey_cntr:\t\t0x0\n", "\t\t\tqkey_viol_cntr:\t\t0x0\n", "\t\t\tsm_sl:\t\t\t0\n",
                    "\t\t\tpkey_tbl_len:\t\t1\n" if eth else "\t\t\tpkey_tbl_len:\t\t128\n",
                    f"\t\t\tgid_tbl_len:\t\t{255 if eth else 8}\n", "\t\t\tsubnet_timeout:\t\t18\n",
                    "\t\t\tinit_type_reply:\t0\n",
                    f"\t\t\tactive_width:\t\t{p['width']} ({WIDTH[p['width']]})\n",
                    f"\t\t\tactive_speed:\t\t{speed} ({spnum})\n",
                    f"\t\t\tphys_state:\t\t{phys} ({pnum})\n"]
            for i, (gid, kind, _v4) in enumerate(p["gids"]):
                out.append(f"\t\t\tGID[{i:3d}]:\t\t{gid}, {kind}\n")
        out.append("\n")
    return "".join(out)


def main(ctx: Ctx, argv: list[str]) -> int:
    verbose = "-v" in argv or "--verbose" in argv
    dev = port = None
    for flag, nxt in zip(argv, argv[1:], strict=False):
        if flag in ("-d", "--ib-dev"):
            dev = nxt
        elif flag in ("-i", "--ib-port"):
            port = int(nxt)
    nics = ctx.spec["nics"]
    if not nics:
        return err("No IB devices found", 255)
    if "-l" in argv or "--list" in argv:
        print(f"{len(nics)} HCA{'s' if len(nics) > 1 else ''} found:")
        print("".join(f"\t{n['device']}\n" for n in nics), end="")
        return 0
    if dev is not None:
        nic = ctx.nic(dev)
        if nic is None:
            return err(f"IB device '{dev}' wasn't found", 255)
        nics = [nic]
    print("".join(device(n, verbose, port) for n in nics), end="")
    return 0
