"""`rdmatool baseline save|list|show|diff`: the nightly record of a healthy fabric (see rdmatool.baseline and
docs/baseline.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import EXIT_INCONCLUSIVE, EXIT_USAGE, data_console, die, print_json
from rdmatool.cli.exit_codes import epilog
from rdmatool.errors import NoData, RdmatoolError

baseline_app = typer.Typer(help="Save, list, show and compare baselines.", no_args_is_help=True)
STORE_HELP = _config.STORE_HELP
FORMATS = ("table", "json")
# rdmatool.baseline's defaults, spelled here so that starting the CLI does not import it (and pandas) just to
# register these commands; tests/test_cli_startup.py keeps the two in step.
DEFAULT_STORE = _config.DEFAULT_STORE  # the default when neither --store nor the config file names one
DEFAULT_NAME = "default"
DEFAULT_KEEP = 30


def register(app: typer.Typer) -> None:
    app.add_typer(baseline_app, name="baseline")


@baseline_app.command("save", epilog=epilog("baseline save"))
def save_command(
    bundle: Annotated[str, typer.Argument(help="A collected bundle directory.")],
    store: Annotated[str, typer.Option("--store", help=STORE_HELP)] = None,
    name: Annotated[str, typer.Option("--name", help="Baseline name in the store.")] = DEFAULT_NAME,
    keep: Annotated[int, typer.Option("--keep", help="Nights to keep that count, and as many that do not "
                                                     f"(default: as stored, else {DEFAULT_KEEP}).")] = None,
    include_failed: Annotated[bool, typer.Option(
        "--include-failed",
        help="Count this night in the statistics even if its diagnosis fails (listed as included by hand); "
             "saving the same bundle again without it takes it out.")] = False,
    playbooks: Annotated[str, typer.Option("--playbooks", help=_config.PLAYBOOKS_HELP)] = None,
    site_values: Annotated[list[str], _config.site_param()] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Add one bundle's figures to a baseline (created if absent), with the night's verdict.

    The bundle is diagnosed as `rdmatool diagnose BUNDLE` does, without a baseline (the baseline rules never judge
    the nights they learn from). A night that fails is saved and listed but kept out of the statistics the baseline
    rules compare with, unless --include-failed; warnings and inconclusive nights count. The exit code is 0
    whatever the verdict once the night is saved: paging on a bad night is the diagnosis' job (`diagnose`, `export
    prometheus`), not the record's. Beyond --keep, the oldest nights are dropped."""
    from rdmatool import baseline as baselines
    from rdmatool import schemas
    from rdmatool.diagnose.pipeline import diagnose_bundle

    as_json, store = chosen("baseline save", fmt, as_json, FORMATS) == JSON, _config.store(store)
    playbooks, site = _config.playbooks(playbooks), _config.site(site_values)
    if keep is not None and keep < 1:
        die(f"rdmatool baseline save: --keep must be at least 1, not {keep}", EXIT_USAGE)
    try:
        path = baselines.path_of(store, name)  # a bad name is refused before the slow part
        night = baselines.night_from_bundle(bundle)  # no figures: no data (exit 3), before judging anything
        diagnosis = baselines.record(diagnose_bundle(bundle, playbooks_dir=playbooks, profile=site))
        night = baselines.judged(night, diagnosis, include_failed)
        doc = baselines.add_night(store, name, night, keep)
    except NoData as exc:
        die(f"rdmatool baseline save: {exc}", EXIT_INCONCLUSIVE)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    shown = baselines.night_summary(night)
    kept = any(n.get("id") == night["id"] for n in doc["nights"])
    out = {"schema": schemas.tag("baseline-save"), "path": str(path), "name": name, "bundle": night["bundle"], "verdict": shown["verdict"],
           "counts": shown["counts"], "counted": shown["counted"] and kept, "status": shown["status"] if kept else
           "dropped: older than the nights kept", "nights": len(doc["nights"]),
           "nights_counted": sum(1 for n in doc["nights"] if baselines.counted(n)), "keep": doc["keep"],
           "groups": len(doc["rule_stats"])}
    if as_json:
        print_json(out)
        return
    found = baselines.findings_text(out["counts"])
    where = ("dropped at once, older than the nights kept" if not kept else
             "in the statistics, by --include-failed" if shown["included_by_hand"] else
             "in the statistics" if out["counted"] else "kept out of the statistics (--include-failed counts it)")
    print(f"saved {bundle} into {path}: night {str(out['verdict']).upper()}{f' ({found})' if found else ''}, {where}; "
          f"{_count(out['nights'], 'night')}, {out['nights_counted']} in the statistics (keep {out['keep']}), "
          f"{_count(out['groups'], 'group')}")
    if not out["nights_counted"]:
        print("no night is in the statistics yet: the baseline rules compare with nothing until a night that does "
              "not fail is saved")


@baseline_app.command("list", epilog=epilog("baseline list"))
def list_command(
    store: Annotated[str, typer.Option("--store", help=STORE_HELP)] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """The baselines of a store and their nights: each night's verdict and whether it is in the statistics the
    baseline rules compare with ("excluded: FAIL" for a night whose diagnosis failed, "included by hand" for one
    saved with --include-failed). A corrupt baseline is reported on stderr and the others still listed."""
    from rdmatool import baseline as baselines
    from rdmatool import schemas

    as_json, store = chosen("baseline list", fmt, as_json, FORMATS) == JSON, _config.store(store)
    try:
        entries = baselines.list_store(store)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    for entry in entries:
        if "error" in entry:
            print(f"rdmatool: {entry['error']}", file=sys.stderr)
    if as_json:
        print_json({"schema": schemas.tag("baseline-list"), "store": str(store), "baselines": entries})
        return
    good = [e for e in entries if "error" not in e]
    if not good:
        print(f"no baselines in {store}")
        return
    from rdmatool.report import baselines as views  # the tables, fitted to COLUMNS (report.tables)

    console = data_console()
    console.print(views.store_table(console, str(store), good))
    for e in good:
        console.print(views.nights_table(console, f"{e['name']}: nights", e["nights"]))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


@baseline_app.command("show", epilog=epilog("baseline show"))
def show_command(
    name: Annotated[str, typer.Argument(help="Baseline NAME in the store, or a baseline file PATH.")],
    store: Annotated[str, typer.Option("--store", help=STORE_HELP)] = None,
    metric: Annotated[str, typer.Option("--metric", help="Only metrics containing this text.")] = None,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Nights, per-group statistics (median, MAD, p10/p90, n) and reference facts of one baseline."""
    from rdmatool import baseline as baselines
    from rdmatool import schemas

    as_json, store = chosen("baseline show", fmt, as_json, FORMATS) == JSON, _config.store(store)
    try:
        path = baselines.resolve(name, store)
        doc = baselines.load(path)
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    stats = [r for r in doc.get("rule_stats", []) if not metric or metric in str(r.get("metric"))]
    nights = [baselines.night_summary(n) for n in doc.get("nights", [])]
    if as_json:
        print_json({"schema": schemas.tag("baseline-show"), "name": doc.get("name"), "path": str(path), "keep": doc.get("keep"), "nights": nights,
                    "rule_stats": stats, "reference": doc.get("reference", {})})
        return
    from rich.text import Text

    from rdmatool.report import baselines as views  # the tables, fitted to COLUMNS (report.tables)
    from rdmatool.report.shown import terminal

    console = data_console()
    counted = sum(1 for n in nights if n["counted"])
    console.print(Text.assemble((terminal(views.number(doc.get("name"))), "bold"),
                                f"  {terminal(path)}  {_count(len(nights), 'night')}, {counted} in the statistics "
                                f"(keep {terminal(views.number(doc.get('keep')))})"))
    console.print(views.nights_table(console, "nights", nights))
    console.print(views.groups_table(console, stats))
    reference = doc.get("reference", {})
    if reference:
        console.print(views.reference_table(console, reference))


@baseline_app.command("diff", epilog=epilog("baseline diff"))
def diff_command(
    a: Annotated[str, typer.Argument(help="Baseline A (NAME or PATH).")],
    b: Annotated[str, typer.Argument(help="Baseline B (NAME or PATH).")],
    store: Annotated[str, typer.Option("--store", help=STORE_HELP)] = None,
    top: Annotated[int, typer.Option("--top", min=0, help="Moved medians to show (0: all).")] = 20,
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """The metrics whose medians moved most from A to B, and the reference facts that changed."""
    from rdmatool import baseline as baselines
    from rdmatool import schemas

    as_json, store = chosen("baseline diff", fmt, as_json, FORMATS) == JSON, _config.store(store)
    try:
        doc_a = baselines.load(baselines.resolve(a, store))
        doc_b = baselines.load(baselines.resolve(b, store))
    except RdmatoolError as exc:
        die(f"rdmatool: {exc}", EXIT_USAGE)
    result = baselines.diff(doc_a, doc_b, top)
    if as_json:
        print_json({"schema": schemas.tag("baseline-diff"), "a": a, "b": b, **result})
        return
    from rich.text import Text

    from rdmatool.report import baselines as views  # the tables, fitted to COLUMNS (report.tables)
    from rdmatool.report.shown import terminal

    console = data_console()
    console.print(Text(f"{result['moved_total']} groups moved; {result['only_a']} only in {terminal(a)}, "
                       f"{result['only_b']} only in {terminal(b)}"))
    if result["moved"]:
        console.print(views.moved_table(console, result["moved"]))
    if result["facts"]:  # a long value cut around what changed, not at its end
        console.print(views.facts_table(console, result["facts"]))
    else:
        console.print("reference facts unchanged")
