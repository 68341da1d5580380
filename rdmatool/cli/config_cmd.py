"""`rdmatool config show`: the configuration in effect (rdmatool.config) and where each value comes from."""

from __future__ import annotations

from typing import Annotated

import typer

from rdmatool.cli import _config
from rdmatool.cli._format import JSON, TABLE, chosen, format_param, json_param
from rdmatool.cli._output import data_console, print_json, print_wrapped
from rdmatool.cli.exit_codes import epilog

config_app = typer.Typer(help="The configuration file: the defaults of -i, --store, --playbooks, the gate profile "
                              "and the site profile.", no_args_is_help=True)
FORMATS = ("table", "json")
# What each path key defaults to without the file (and without its option).
BUILT_IN = {"inventory": None, "store": _config.DEFAULT_STORE, "playbooks": "(the shipped playbooks)",
            "gate_profile": "(the built-in gate policy)"}


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")


@config_app.command("show", epilog=epilog("config show"))
def show_command(
    fmt: Annotated[str, format_param(FORMATS)] = TABLE,
    as_json: Annotated[bool, json_param()] = False,
) -> None:
    """Print the effective configuration: each setting, its value and where it comes from (FILE:LINE of the config
    file, or the built-in default); options given to a command still win over both."""
    from rdmatool import limits
    from rdmatool.config import SITE_KEYS, candidates
    from rdmatool.schemas import tag
    from rdmatool.tune.suggest.context import DEFAULT_PROFILE

    fmt = chosen("config show", fmt, as_json, FORMATS)
    cfg = _config.current()
    settings = [{"key": key, "value": getattr(cfg, key) or BUILT_IN[key], "source": cfg.source(key) or "default"}
                for key in BUILT_IN]
    settings += [{"key": f"site.{key}", "value": cfg.site.get(key, DEFAULT_PROFILE.get(key)),
                  "source": cfg.source(f"site.{key}") or "default"} for key in SITE_KEYS]
    settings += [{"key": f"limits.{key}", "value": cfg.limits.get(key, default),
                  "source": cfg.source(f"limits.{key}") or "default"} for key, default in limits.DEFAULTS.items()]
    looked = candidates()
    doc = {"schema": tag("config-show"), "file": cfg.path,
           "searched": [] if looked is None else [str(p) for p in looked], "settings": settings}
    if fmt == JSON:
        print_json(doc)
        return
    out = data_console()  # wrapped to COLUMNS: a value goes on under itself, never past the edge
    if cfg.path:
        print_wrapped(out, f"config file: {cfg.path}")
    elif looked is None:
        print_wrapped(out, "config file: none (RDMATOOL_CONFIG is set and empty)")
    else:
        print_wrapped(out, f"config file: none (looked for {', '.join(doc['searched'])})")
    width = max(len(s["key"]) for s in settings)
    for s in settings:
        value = "(none)" if s["value"] is None else s["value"]
        print_wrapped(out, f"  {s['key']:{width}}  {value}  ({s['source']})", hanging=width + 2)
