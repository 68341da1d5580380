"""Parser registry: one module per command output, named by its public `rdmatool parse` name.

A parser module exposes `parse(text: str) -> list[Sample]` and a docstring whose first line describes it. Host
parsers live in this package, switch parsers in `rdmatool.parsers.switch`; a module whose name starts with `_` is
a helper, not a parser.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

from rdmatool.errors import ParseError
from rdmatool.model import Sample
from rdmatool.parsers._common import without_trailing_prompt

_PACKAGES = ("rdmatool.parsers", "rdmatool.parsers.switch")


@dataclass(frozen=True)
class ParserInfo:
    name: str
    summary: str
    module: str
    parse: Callable[[str], list[Sample]]


@cache
def registry() -> dict[str, ParserInfo]:
    found: dict[str, ParserInfo] = {}
    for package_name in _PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_") or info.ispkg:
                continue
            module = importlib.import_module(f"{package_name}.{info.name}")
            parse_fn = getattr(module, "parse", None)
            if parse_fn is None:
                continue
            doc = (module.__doc__ or "").strip()
            summary = doc.splitlines()[0] if doc else ""
            found[info.name] = ParserInfo(info.name, summary, module.__name__, parse_fn)
    return dict(sorted(found.items()))


def names() -> list[str]:
    return list(registry())


def get(name: str) -> ParserInfo:
    try:
        return registry()[name]
    except KeyError:
        raise KeyError(name) from None


def parse(name: str, text: str) -> list[Sample]:
    """Run one parser; only ParseError escapes, whatever the parser trips over. A shell or CLI prompt left at the
    end of pasted output is dropped first, whatever the parser, and counted (a `parse_skipped_lines` sample,
    entity `prompt`)."""
    info = get(name)
    text, had_prompt = without_trailing_prompt(text)
    try:
        samples = info.parse(text)
        if had_prompt:
            samples = [*samples, Sample("prompt", "parse_skipped_lines", 1, raw_key="prompt")]
        return samples
    except ParseError:
        raise
    except Exception as exc:  # a parser bug must still surface as a located, one-line error
        raise ParseError(name, 0, "", f"internal parser error ({type(exc).__name__}: {exc})") from exc
