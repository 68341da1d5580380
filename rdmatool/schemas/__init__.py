"""The JSON Schemas rdmatool ships, read back with `load`: the public bundle format (`bundle-manifest`,
`bundle-side`, `bundle-outputs`) and the JSON outputs tools rely on (`diagnose`, `gate`, `pcap`, `perf`, `bundle-show`, ...).

An output names its shape and version in its `schema` key (`rdmatool-diagnosis/1`): `tag(name)` is that value, read
from the schema's own `schema` const, so the two cannot drift apart. A new output ships `<name>.schema.json` here
with such a const and puts `{"schema": tag(name), ...}` first; docs/json-schemas.md says when the number changes.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

_SUFFIX = ".schema.json"


def names() -> list[str]:
    """Every shipped schema, by name."""
    return sorted(p.name[: -len(_SUFFIX)] for p in resources.files(__package__).iterdir() if p.name.endswith(_SUFFIX))


@cache
def load(name: str) -> dict:
    """A shipped schema by name (`bundle-manifest`, `diagnose`, ...); KeyError names the choices."""
    if name not in names():
        raise KeyError(f"no schema {name!r}; the shipped ones: {', '.join(names())}")
    return json.loads(resources.files(__package__).joinpath(f"{name}{_SUFFIX}").read_text(encoding="utf-8"))


def tag(name: str) -> str:
    """The `schema` value of an output of this shape (`rdmatool-gate/1`)."""
    return load(name)["properties"]["schema"]["const"]


def errors(name: str, document: object) -> list[str]:
    """Where a document departs from a shipped schema, one line each (`findings/3/severity: 'bad' is not one of
    ...`); empty when it conforms."""
    import jsonschema  # imported when validating only: the commands that never do stay light

    validator = jsonschema.Draft202012Validator(load(name), registry=_registry())
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"
            for e in sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))]


@cache
def _registry():  # noqa: ANN202 - a referencing.Registry: every shipped schema under its `$id`
    """The shipped schemas by `$id`, so that one may refer to another (`bundle-outputs` holds `bundle-side` entries)."""
    from referencing import Registry, Resource

    return Registry().with_resources((load(n)["$id"], Resource.from_contents(load(n))) for n in names())
