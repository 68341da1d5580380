"""`rdmatool trial BEFORE AFTER`: whether a change helped (rdmatool.trial); this module reads the options and prints."""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_USAGE, die, print_json
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import RdmatoolError

FORMATS = ("table", "json")
# the glossary units of rdmatool.present.units.human, per unit of a trial figure
_HUMAN = {"share": "ratio", "µs": "us", "Gb/s": "Gb/s"}


def register(app: typer.Typer) -> None:
    app.command("trial", epilog=epilog("trial"))(trial_command)


def _value(value: float, unit: str) -> str:
    from rdmatool.present.units import human

    text = human(value, _HUMAN.get(unit, ""))
    return f"{text}/s" if unit == "/s" else text


def _spread(side: dict | None, unit: str) -> str:
    if side is None:
        return "-"
    if side["n"] < 2:
        return _value(side["median"], unit)
    return f"{_value(side['median'], unit)} [{_value(side['min'], unit)}, {_value(side['max'], unit)}]"


_SOURCE = {"bundle": "the bundles' perftest results and counters", "incast": "the gate's incast stage (under load)",
           "mixed": "both"}
_SAID = {"better": "better", "worse": "WORSE", "changed": "changed (context)", "noise": "within the runs' spread",
         "unproven": "one run: no spread", "not measured": "not measured"}


def _one_line(value):
    """`value` with every string in it shown on one line as a terminal shows it safely (rdmatool.report.shown): the
    settings, entities and values come from the bundles, and a `restore ... to <value>` line stands among commands."""
    from rdmatool.report.shown import terminal

    if isinstance(value, str):
        return terminal(value, newlines=False)
    if isinstance(value, dict):
        return {k: _one_line(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_one_line(v) for v in value]
    return value


def _print(result: dict) -> None:
    result = _one_line(result)
    before, after = result["before"], result["after"]
    typer.echo(f"trial: {len(before['runs'])} run(s) before ({before['path']}), {len(after['runs'])} after "
               f"({after['path']}); figures from {_SOURCE[before['source']]}" + (
                   f" before, {_SOURCE[after['source']]} after" if before["source"] != after["source"] else ""))
    if result["changes"]:
        typer.echo("changed (BEFORE's last run against AFTER's first):")
        for c in result["changes"]:
            where = " ".join(str(p) for p in (c["target"], c["entity"]) if p not in (None, ""))
            prio = f" priority {c['priority']}" if c["priority"] is not None else ""
            typer.echo(f"  {where} {c['setting']}{prio}: {c['before']} → {c['after']}")
    else:
        typer.echo("changed: nothing in the configuration")
    typer.echo("effect (median of the runs [lowest, highest]):")
    rows = [(e["label"], _spread(e["before"], e["unit"]), _spread(e["after"], e["unit"]),
             f"{e['relative']:+.0%}" if e["relative"] is not None else "", _SAID[e["effect"]])
            for e in result["effects"]]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        typer.echo(f"  {r[0]:<{widths[0]}}  {r[1]:<{widths[1]}} → {r[2]:<{widths[2]}}  {r[3]:>{widths[3]}}  {r[4]}")
    for note in result["notes"]:
        typer.echo(f"note: {note}")
    if result["revert"]:
        typer.echo("revert to BEFORE's values (printed, never run):")
        for item in result["revert"]:
            where = " ".join(str(p) for p in (item["target"], item["entity"]) if p not in (None, ""))
            typer.echo(f"  {where} {item['what']}" + (f" ({item['platform']})" if item["platform"] else "") + ":")
            for line in item["commands"] or [item["by_hand"]]:
                typer.echo(f"    {line}")
            if item["note"]:
                typer.echo(f"    note: {item['note']}")
    typer.echo(f"verdict: {result['verdict']}: {result['action']}: {result['reason']}")


def trial_command(
    before: Annotated[str, typer.Argument(help="A bundle, or a directory of bundles: the runs before.")],
    after: Annotated[str, typer.Argument(help="The same, after the change.")],
    site: Annotated[list[str], _config.site_param()] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Whether a change helped: what changed in the configuration between BEFORE and AFTER (the bundle diff), and its
    effect on p99 latency, pause fraction, ECN marks, CNPs, goodput and fairness against the spread of the repeated
    runs (a directory of bundles per side; 3 or more each). Verdict: helped (keep, exit 0), hurt (revert: the
    commands restoring BEFORE's values are printed, never run; exit 1), or inconclusive (exit 3)."""
    from rdmatool.config import site_profile
    from rdmatool.trial import compare, runs

    as_json = chosen("trial", fmt, as_json, FORMATS) == JSON
    try:
        sides = runs.load(before), runs.load(after)
        result = compare.trial(*sides, site_profile(_config.site(site)), before, after)
    except ValueError as exc:
        die(f"rdmatool trial: {exc}", EXIT_USAGE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    if as_json:
        print_json(result)
    else:
        _print(result)
    raise typer.Exit(compare.EXIT[result["verdict"]])
