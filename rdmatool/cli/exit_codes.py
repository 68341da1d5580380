"""What each command's exit code means, in one table: every command's `--help` prints its row (`epilog`),
docs/cli-conventions.md holds the table (`markdown_table`) with the rows every command shares (`SHARED`), which the
README links (tests/test_exit_codes_doc.py keeps them equal).

The contract for schedulers and scripts: 0 pass, 1 fail (something named to drain or fix), 2 usage or bad input
(one line naming the file, host or line), 3 inconclusive (no data, unreachable, budget). 0-3 are verdicts about the
input; 4 is rdmatool itself failing (a bug: one line, cli.main), never a verdict. It is not 3, so that a scheduler's
hook set to fail closed holds the job when rdmatool crashed, and never 1, which would read as "drain these nodes".
A stdout closed by its reader (`| head -1`) is EXIT_CLOSED, 141, for every command: not a verdict either
(rdmatool.cli._boundary says why).
"""

from __future__ import annotations

_SELECTION = "an empty target selection (--limit, --exclude, --shard)"

# command path -> {code: meaning}. A meaning never holds "; <digit> = " (the separator of the printed row) nor
# square brackets (the help is rich text).
CODES: dict[str, dict[int, str]] = {
    "parse": {
        0: "parsed",
        1: "the output holds a line the parser does not know (NAME: FILE:LINE)",
        2: "usage, unknown parser, unreadable or oversized file, or an empty output from a tool that always prints "
           "something (NAME: FILE: empty output)",
    },
    "inventory show": {
        0: "printed",
        2: "usage or a bad inventory (FILE:LINE)",
        3: _SELECTION,
    },
    "collect": {
        0: "every target collected",
        2: "usage or bad input: inventory, options, bundle path",
        3: f"some or all targets not collected, or cut short by their deadline (the bundle is still written; an "
           f"existing one is replaced only with --force), or {_SELECTION}",
    },
    "bundle show": {
        0: "printed",
        2: "not a bundle, or a corrupt one (the file is named)",
    },
    "bundle merge": {
        0: "merged",
        2: "refused, nothing written: usage, not a bundle or a corrupt one, snapshots not aligned, a target in two "
           "bundles without --prefer, an output that cannot be written (the bundle and the reason are named)",
    },
    "bundle diff": {
        0: "no change between the two bundles",
        1: "changes found, each listed: targets, configuration, cabling or rates beyond --tolerance",
        2: "usage, not a bundle, or a corrupt one (the file is named)",
        3: "no data: a bundle in which no target answered, nothing to compare",
    },
    "export prometheus": {
        0: "written, whatever the verdict (it is in rdmatool_gate_verdict)",
        2: "usage or bad input: bundle, playbooks, baseline, an output file that cannot be written",
        3: "no data: no target of the bundle answered (the file is still written, verdict inconclusive)",
    },
    "plan bandwidth": {
        0: "printed: feasible, or nothing to judge it against (no --nodes or no line rate)",
        1: "not feasible: the ring all-reduce takes longer than an iteration at the efficiency judged on (the verdict "
           "line says how long)",
        2: "usage or bad input: a value out of range, the bundle, the baseline",
        3: "--bundle or --baseline holds nothing to measure (the nominal plan is still printed, not judged)",
    },
    "plan checkpoint": {
        0: "printed: feasible",
        1: "not feasible: a stall not shorter than the interval",
        2: "usage or bad input: a size, duration or rate that cannot be read",
    },
    "plan storage": {
        0: "printed: the aggregate reaches --need, or no --need to judge it against",
        1: "not feasible: the aggregate read rate is below --need at the efficiency judged on",
        2: "usage or bad input: --nics, --efficiency or --need that cannot be read, the bundle",
        3: "--bundle holds no perftest result to measure the efficiency (the plan is printed at the 3FS reference's)",
    },
    "trial": {
        0: "helped: a decisive figure (p99 latency, pause fraction, goodput, fairness) better beyond the runs' spread, "
           "none worse: keep the change",
        1: "hurt: a decisive figure worse beyond the runs' spread, none better: revert (the commands restoring "
           "BEFORE's values are printed, never run)",
        2: "usage or bad input: a side that is neither a bundle nor a directory of bundles, a corrupt bundle",
        3: "inconclusive: no measurable effect, better and worse at once, fewer than two runs a side, runs of one "
           "side that differ in configuration, or no configuration change",
    },
    "diagnose": {
        0: "pass, or warnings only",
        1: "an error or critical finding: fix what it names",
        2: "usage or bad input: bundle, playbooks, baseline, inventory, --limit or --exclude with a BUNDLE",
        3: f"inconclusive: no data (no target answered, a bundle without outputs), collection or parse failures, "
           f"or {_SELECTION}",
    },
    "report": {
        0: "written: pass, or warnings only",
        1: "written: an error or critical finding, named in the report",
        2: "usage or bad input: bundle, playbooks, baseline, topology, an output file that cannot be written",
        3: "inconclusive: collection or parse failures (the report is written), or no data: no target answered "
           "(nothing written)",
    },
    "gate": {
        0: "pass, or warnings only",
        1: "fail: the nodes to drain (each with its stage and finding) or a named fabric-level failure",
        2: "usage or bad input: inventory, profile, playbooks, bundle, --limit or --exclude with --replay, an output "
           "file that cannot be written",
        3: f"inconclusive: no data, targets unreachable or not read in full (cut short by their deadline, a command "
           f"that hung, files missing from the bundle) beyond --allow-missing, a stage that timed out or could not "
           f"decide, or {_SELECTION}; nothing is drained (a stage whose own code broke is 4, unless another stage "
           f"failed: 1)",
    },
    "baseline save": {
        0: "saved",
        2: "usage or bad input: bundle, store, baseline file",
        3: "no data: the bundle holds no figures to baseline (no target answered)",
    },
    "baseline list": {
        0: "listed (a corrupt baseline is named on stderr, the others still listed)",
        2: "the store cannot be read",
    },
    "baseline show": {
        0: "printed",
        2: "no such baseline, or a corrupt one",
    },
    "baseline diff": {
        0: "printed",
        2: "no such baseline, or a corrupt one",
    },
    "perf run": {
        0: "every pair at rate (storage mode: every storage node read in full, none slow; warnings at most)",
        1: "bad nodes or bad links named (storage mode: an error finding, such as a storage node slow against the "
           "fleet's median, named with its NIC and switch port)",
        2: "usage or bad input: inventory, options, fewer than two hosts (storage mode: no storage node or no "
           "client reached, or playbooks that do not load: FILE:LINE)",
        3: f"inconclusive: pairs that errored or did not run, unreachable hosts, suspects without enough evidence, "
           f"a storage node not read in full, or {_SELECTION}",
    },
    "pcap": {
        0: "pass, or warnings only",
        1: "an error or critical finding",
        2: "unreadable or malformed file (the file and the byte offset)",
        3: "the capture holds no packets",
    },
    "doctor": {
        0: "printed: whether pyverbs is usable (and why not), the RDMA devices and the script's tools are in the report",
        2: "usage",
    },
    "capture": {
        0: "captured",
        2: "usage or bad input: inventory, interface name, --limit not naming exactly one host",
        3: f"the host could not capture (unreachable, no tcpdump, not permitted), or {_SELECTION}",
    },
    "watch": {
        0: "ran its --duration or was stopped (SIGTERM, Ctrl-C), with no error or critical finding open at the end; "
           "every completed interval is kept in --out",
        1: "an error or critical watch finding still open when it ended (each was printed as a JSON line)",
        2: "usage or bad input: inventory, --duration, playbooks, an --out or --textfile directory that cannot be "
           "used or a history in --out that is not one",
        3: f"no host answered in any interval, or {_SELECTION}",
    },
    "schema": {
        0: "printed (without a NAME: the names of the shipped schemas)",
        2: "no such schema (the shipped ones are named)",
    },
    "config show": {
        0: "printed",
        2: "a configuration file that cannot be used (FILE:LINE and the key), or RDMATOOL_CONFIG naming no file",
    },
    "docs": {
        0: "printed (without a NAME: the names of the shipped documents)",
        2: "no such document, or a section or row it does not have (the shipped ones are named)",
    },
    "nccl env": {
        0: "printed: a recipe for every compute host selected, warnings at most (one environment for all when one "
           "fits)",
        1: "an error finding: a host no single recipe fits (GID indexes split across its rails, no RoCE v2 IPv4 GID, "
           "the RoCE DSCP not on the lossless priority, no active rail); the recipe is still printed",
        2: "usage or bad input: bundle, inventory, --limit, --site",
        3: f"no compute host with an active RDMA rail in the bundle, nothing collected, or {_SELECTION}",
    },
    "nccl check": {
        0: "printed: NCCL used the recipe's rails, GID index and traffic class, or no --bundle to check against "
           "(warnings at most)",
        1: "an error finding: socket fallback, a rank missing a rail, an HCA not on the compute rails, a GID index "
           "or traffic class other than the recipe's",
        2: "usage or bad input: a log that cannot be read (FILE: why), a bundle",
        3: "no NCCL INFO line in the logs (the job ran without NCCL_DEBUG=INFO)",
    },
}


EXIT_INTERNAL = 4
_INTERNAL = "internal error of rdmatool itself (one line; never a verdict: fail closed on it)"
for _codes in CODES.values():
    _codes[EXIT_INTERNAL] = _INTERNAL


# A fact judged alike by every command that meets it, as a row of the table: (who meets it, {code: meaning}).
SHARED: dict[str, tuple[str, dict[int, str]]] = {
    "a tool missing on a host": (
        "collect, diagnose, report, gate, export prometheus",
        {0: "a warning naming the tool and the host (`perfquery not installed on gpu07`); the rest of what the host "
            "said is judged, and a finding or another failure decides as it would without it",
         3: "only when the host said nothing else: it is not read"}),
}
EXIT_CLOSED = 141  # 128 + SIGPIPE; ended by rdmatool.cli._boundary
CLOSED = (f"A stdout closed by its reader (`rdmatool parse --list | head -1`) ends every command quietly with exit "
          f"{EXIT_CLOSED} (128 + SIGPIPE, as a shell reports a tool the reader left): nothing on stderr, and never "
          f"a verdict, so a gate whose output was cut is neither a pass nor a drain.")


def epilog(command: str) -> str:
    """The `--help` text of one command's exit codes: `Exit codes: 0 = ...; 1 = ...`."""
    return "Exit codes: " + "; ".join(f"{code} = {meaning}" for code, meaning in sorted(CODES[command].items())) + "."


def markdown_table(order: list[str] | None = None) -> str:
    """The table of docs/cli-conventions.md: a row per command (in `order`, else this module's), then the shared
    rows; `—` for a code a command does not use."""
    lines = ["| command | 0 | 1 | 2 | 3 | 4 |", "|---|---|---|---|---|---|"]
    for command in order or list(CODES):
        codes = CODES[command]
        lines.append(f"| `rdmatool {command}` | " + " | ".join(codes.get(c, "—") for c in range(5)) + " |")
    for fact, (who, codes) in SHARED.items():
        lines.append(f"| {fact} ({who}) | " + " | ".join(codes.get(c, "—") for c in range(5)) + " |")
    return "\n".join(lines)
