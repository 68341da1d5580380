"""`rdmatool pcap FILE`: packet-level evidence from a pcap / pcapng capture, judged by the shipped playbooks.

Exit 0 pass or warnings, 1 an error-level finding, 2 bad input (unreadable or malformed file: one line naming the
file and the byte offset), 3 inconclusive (a capture without packets).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, die, print_json
from rdmatool.cli.exit_codes import epilog

FORMATS = ("table", "json")


def register(app: typer.Typer) -> None:
    app.command("pcap", epilog=epilog("pcap"))(pcap_command)


def pcap_command(
    file: Annotated[str, typer.Argument(help="A pcap or pcapng file (tcpdump -w, rdmatool capture).")],
    fmt: Annotated[str, format_param(FORMATS, "json: the findings and the summary")] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
    link_gbps: Annotated[float, typer.Option(
        "--link-gbps",
        help="Link rate for the pause time (default: the bundle's, when the file is in one).")] = None,
    roce_dscp: Annotated[int, typer.Option(
        "--roce-dscp", min=0, max=63, metavar="DSCP",
        help="The RoCE DSCP (default: the site profile's roce_dscp: `rdmatool config show`).")] = None,
    roce_priority: Annotated[int, typer.Option(
        "--roce-priority", min=0, max=7, metavar="P",
        help="The RoCE (lossless) priority (default: the site profile's roce_priority).")] = None,
    bin_ms: Annotated[float, typer.Option("--bin-ms",
                                          help="Time bin for throughput and periodicity, ms.")] = 10.0,
) -> None:
    """Read a capture: PFC pause per priority, RoCEv2 flows, DSCP / ECN, CNPs, PSN gaps, NAKs, other traffic on
    the RoCE class, periodic bursts; findings like `diagnose`."""
    from rdmatool.capture import CaptureError, Options, analyse_file
    from rdmatool.capture.facts import standalone
    from rdmatool.diagnose.pipeline import diagnose_analysis
    from rdmatool.errors import RdmatoolError
    from rdmatool.outcome.verdict import EXIT_CODES
    from rdmatool.schemas import tag

    as_json = chosen("pcap", fmt, as_json, FORMATS) == JSON
    site = _config.site()
    roce_dscp = roce_dscp if roce_dscp is not None else site.get("roce_dscp", Options.roce_dscp)
    roce_priority = roce_priority if roce_priority is not None else site.get("roce_priority", Options.roce_priority)
    if not 0.001 <= bin_ms <= 60000:
        die(f"rdmatool pcap: --bin-ms {bin_ms:g}: between 0.001 and 60000", EXIT_USAGE)
    if link_gbps is not None and not link_gbps > 0:
        die(f"rdmatool pcap: --link-gbps {link_gbps:g}: must be positive", EXIT_USAGE)
    try:
        link = link_gbps if link_gbps is not None else _bundle_link_gbps(Path(file))
        options = Options(roce_dscp=roce_dscp, roce_priority=roce_priority, bin_s=bin_ms / 1000.0, link_gbps=link)
        summary, tally = analyse_file(file, options)
    except CaptureError as exc:
        die(f"rdmatool pcap: {exc}", EXIT_USAGE)
    except RdmatoolError as exc:
        die(f"rdmatool pcap: {exc}", EXIT_USAGE)
    if not summary["packets"]:
        if as_json:
            print_json({"schema": tag("pcap"), "verdict": "inconclusive", "findings": [], "failures": [],
                        "summary": summary})
        die(f"rdmatool pcap: {file}: the capture holds no packets (inconclusive)", EXIT_INCONCLUSIVE)
    try:
        # the rules read the class the packets were read against (--roce-dscp / --roce-priority over the file's)
        profile = {**site, "roce_dscp": roce_dscp, "roce_priority": roce_priority}
        result = diagnose_analysis(standalone(Path(file).name, summary, tally), source=str(file), profile=profile)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    result.extra["summary"] = summary
    result.extra["capture"] = {"file": str(file), "roce_dscp": roce_dscp, "roce_priority": roce_priority,
                               "bin_ms": bin_ms, "link_gbps": link}
    if as_json:
        print_json(result.as_json(schema=tag("pcap")))
    else:
        from rdmatool.cli._output import data_console
        from rdmatool.report import text

        console = data_console()
        text.render(result, console)
        _print_summary(summary, console, link)
    raise typer.Exit(EXIT_CODES[result.verdict])


def _bundle_link_gbps(path: Path) -> float | None:
    """The link rate of the captured device when the file sits in a bundle (snapshots/<i>/<target>/capture.*)."""
    from rdmatool.capture.facts import CAPTURE_FILE

    match = CAPTURE_FILE.fullmatch(path.name)
    parts = path.resolve().parts
    if not match or len(parts) < 5 or parts[-4] != "snapshots":
        return None
    root = Path(*parts[:-4])
    if not (root / "manifest.json").is_file():
        return None
    from rdmatool.capture.facts import link_gbps_of
    from rdmatool.table.analysis import analyse_path

    return link_gbps_of(analyse_path(root), parts[-2], match.group(1))


def _print_summary(summary: dict, console, link: float | None) -> None:
    from rdmatool.report import tables

    roce = summary["roce"]
    console.print(f"{summary['packets']} packets over {summary['duration_s']:.3f} s; RoCEv2 {roce['packets']} "
                  f"packets / {roce['bytes']} bytes in {roce['flows']} flows, {roce['cnp']} CNPs, "
                  f"{roce['naks']} NAKs, {roce['psn_gaps']} PSN gaps, {roce['retransmissions']} retransmissions",
                  highlight=False)
    console.print(f"DSCP of the RoCEv2 packets: {_counted(roce['dscp'])}; ECN: {_counted(roce['ecn'], ECN_NAMES)}",
                  highlight=False)
    other = summary["other_on_roce_class"]
    if other["packets"]:
        console.print(f"other traffic on the RoCE class: {other['packets']} packets ({_counted(other['by_protocol'])}), "
                      f"{other['bytes']} bytes", highlight=False)
    if summary["pfc"] or summary["global_pause"]["frames"]:
        rows = [[str(e["priority"]), str(e["frames"]), str(e["quanta"]),
                 "-" if e["pause_time_s"] is None else f"{e['pause_time_s']:.6f}", ", ".join(e["senders"])]
                for e in summary["pfc"]]
        gp = summary["global_pause"]
        if gp["frames"]:
            rows.append(["802.3x", str(gp["frames"]), str(gp["quanta"]),
                         "-" if gp["pause_time_s"] is None else f"{gp['pause_time_s']:.6f}", ", ".join(gp["senders"])])
        console.print(tables.fitted(console, ("priority", "frames", "quanta", "pause s", "senders"), rows,
                                    keys=("priority",), right=("frames", "quanta", "pause s"),
                                    title="pause frames" + ("" if link else " (pause time needs --link-gbps)")))
    if summary["flows"]:
        console.print(_flow_table(summary["flows"][:10], len(summary["flows"]), console))
    periodic = [(name, p) for name, p in summary["periodic"].items() if isinstance(p, dict) and p["period_s"]]
    for name, p in periodic:
        console.print(_periodic(name, p), highlight=False)


ECN_NAMES = {"not_ect": "not-ECT", "ect0": "ECT(0)", "ect1": "ECT(1)", "ce": "CE"}


def _counted(counts: dict, names: dict | None = None) -> str:
    """`26 ×1000, 34 ×5`: a count per value as a person reads it (the JSON keeps the mapping)."""
    return ", ".join(f"{(names or {}).get(key, key)} ×{n}" for key, n in counts.items()) or "none"


def _periodic(name: str, p: dict) -> str:
    """A periodic series and the share of its bursts that meet a pause or a CE peak (none: nothing to meet)."""
    shares = (("pause", p["coincides_with_pause"]), ("CE", p["coincides_with_ce"]))
    met = [f"{what} peaks {share * 100:.0f} %" for what, share in shares if share is not None]
    return (f"periodic {name}: every {p['period_s']:g} s (strength {p['strength']:.2f})"
            + (f"; its bursts in step with {', '.join(met)}" if met else ""))


FLOW_COLUMNS = ("src", "dst", "qp", "packets", "bytes", "dscp", "ce", "cnp", "gaps", "Gb/s p50", "Gb/s max")


def _flow_table(flows: list[dict], total: int, console):
    """The top flows, a column per figure when they fit the console; else the flow's addresses and QP stacked in
    one column and its figures in three: an address is never cut (an IPv6 address takes 39 characters)."""
    from rdmatool.report import tables

    title = f"RoCE flows (top {len(flows)} of {total})"
    rows = [[f["src"], f["dst"], str(f["dest_qp"]), str(f["packets"]), str(f["bytes"]), "-" if f["dscp"] is None else str(f["dscp"]), str(f["ce"]),
             str(f["cnp"]), str(f["psn_gaps"]), f"{f['gbps_p50']:.3f}", f"{f['gbps_max']:.3f}"] for f in flows]
    if tables.fits(console, FLOW_COLUMNS, rows):
        return tables.fitted(console, FLOW_COLUMNS, rows, keys=("src", "dst", "qp"), right=FLOW_COLUMNS[3:],
                             title=title)
    stacked = [[tables.lines(r[0], r[1], f"qp {r[2]}"), tables.lines(r[3], r[4]),
                tables.lines(f"dscp {r[5]}", f"ce {r[6]} cnp {r[7]}", f"gaps {r[8]}"), tables.lines(r[9], r[10])]
               for r in rows]
    return tables.fitted(console, ("src / dst / qp", "packets / bytes", "marks", "Gb/s p50 / max"), stacked,
                         keys=("src / dst / qp",), right=("packets / bytes", "Gb/s p50 / max"), title=title,
                         show_lines=True)
