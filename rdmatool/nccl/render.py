"""A recipe in the forms a launcher takes: shell exports (`env`), a Slurm TaskProlog (`slurm`), a Kubernetes env list
and ConfigMap (`k8s`), the JSON document (`json`) and the human table with each value's why (`table`).

One environment for the fleet when every host's recipe is the same; otherwise one per host, chosen by the host's
short name where the format runs on the node (a shell `case`, the TaskProlog), or one ConfigMap key per node.
"""

from __future__ import annotations

import shlex

from rdmatool import schemas
from rdmatool.nccl.findings import finding_json, findings_lines
from rdmatool.nccl.recipe import Recipe


def as_json(recipe: Recipe, found: list) -> dict:
    return {
        "schema": schemas.tag("nccl-env"),
        "site": {"roce_priority": recipe.site["roce_priority"], "roce_dscp": recipe.site["roce_dscp"]},
        "fits_all": recipe.fits_all,
        "fleet": {"env": recipe.fleet_env(), "differ": recipe.differ},
        "hosts": [h.as_json() for h in recipe.hosts],
        "skipped": [{"host": name, "why": why} for name, why in sorted(recipe.skipped.items())],
        "findings": [finding_json(f) for f in found],
    }


def _exports(env: dict[str, str], indent: str = "") -> list[str]:
    return [f"{indent}export {k}={shlex.quote(v)}" for k, v in env.items()]


def shell(recipe: Recipe) -> str:
    """`export` lines to source in a job script: the fleet's, else a `case` on the host's short name."""
    lines = ["# rdmatool nccl env: the NCCL / UCX connection recipe (`rdmatool nccl env --format table` says why)"]
    if recipe.fits_all:
        return "\n".join(lines + _exports(recipe.fleet_env())) + "\n"
    lines.append('case "$(hostname -s)" in')
    for host in recipe.hosts:
        lines.append(f"  {shlex.quote(host.name)})")
        lines += _exports(host.env(), "    ")
        lines.append("    ;;")
    lines.append("esac")
    return "\n".join(lines) + "\n"


def slurm(recipe: Recipe) -> str:
    """A TaskProlog: Slurm sets in each task's environment every `export NAME=value` line the script prints."""
    lines = ["#!/bin/sh", "# Slurm TaskProlog (slurm.conf: TaskProlog=/path/to/this): each task gets the NCCL / UCX",
             "# recipe of its node; written by `rdmatool nccl env --format slurm`."]

    def echo(env: dict[str, str], indent: str) -> list[str]:
        return [f"{indent}echo {shlex.quote(f'export {k}={v}')}" for k, v in env.items()]

    if recipe.fits_all:
        return "\n".join(lines + echo(recipe.fleet_env(), "")) + "\n"
    lines.append('case "$(hostname -s)" in')
    for host in recipe.hosts:
        lines.append(f"  {shlex.quote(host.name)})")
        lines += echo(host.env(), "    ")
        lines.append("    ;;")
    lines.append("esac")
    return "\n".join(lines) + "\n"


def _yaml_text(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def k8s(recipe: Recipe) -> str:
    """The container's `env:` list when one recipe fits every node; else a ConfigMap with one key per node (mount it
    and source the node's key, or template the pod per node)."""
    if recipe.fits_all:
        lines = ["# the container's env (spec.containers[].env); written by `rdmatool nccl env --format k8s`", "env:"]
        for k, v in recipe.fleet_env().items():
            lines += [f"  - name: {k}", f"    value: {_yaml_text(v)}"]
        return "\n".join(lines) + "\n"
    lines = ["# the nodes' recipes differ: one key per node, a file of `export` lines to source on that node",
             "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: rdmatool-nccl-env", "data:"]
    for host in recipe.hosts:
        lines.append(f"  {host.name}.env: |")
        lines += _exports(host.env(), "    ")
    return "\n".join(lines) + "\n"


def table(recipe: Recipe, found: list) -> list[str]:
    """The human view: the fleet's environment (or which keys differ), each host's values with why, the findings."""
    out = [f"site RoCE class: DSCP {recipe.site['roce_dscp']} on priority {recipe.site['roce_priority']}"]
    if recipe.fits_all:
        out.append(f"one recipe fits all {len(recipe.hosts)} compute hosts:")
    else:
        out.append(f"no one recipe fits all {len(recipe.hosts)} compute hosts: "
                   f"{', '.join(recipe.differ)} differ")
    out += [f"  {k}={v}" for k, v in recipe.fleet_env().items()]
    for host in recipe.hosts:
        out.append("")
        out.append(f"{host.name} ({', '.join(p.name + ' ' + p.link_layer for p in host.rails)})")
        for key, setting in host.settings.items():
            shown = setting.value if setting.value is not None else "(unset)"
            out.append(f"  {key}={shown}")
            out.append(f"      why: {setting.why}")
    if recipe.skipped:
        out.append("")
        out.append("no recipe:")
        out += [f"  {name}: {why}" for name, why in sorted(recipe.skipped.items())]
    return out + findings_lines(found)
