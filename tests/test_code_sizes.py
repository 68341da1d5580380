"""Size limits that keep the package readable in one sitting: no module over 600 lines, no function over 80 (a
documented hot loop excepted), at most 12 modules flat in rdmatool/ (the rest in the package of their pipeline
step), and no name of the facts table's former wrappers left behind."""

from __future__ import annotations

import ast

from tests.helpers import REPO

PACKAGE = REPO / "rdmatool"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80
MAX_FLAT_MODULES = 12

# Functions allowed over the limit: a per-packet loop where a call per step would cost on every packet. Each says
# why in its docstring, which names this test.
HOT_LOOPS = {("capture/scan.py", "scan")}
# Functions over the limit for now, each to be split and its entry removed with it.
LONG_FUNCTIONS: dict[tuple[str, str], str] = {}
# Modules allowed over the limit, with the reason (none today).
LONG_MODULES: dict[str, str] = {}
GONE = ("FactColumns", "TableColumns", "HeldFrame", "__dict__[")


def _modules() -> dict[str, str]:
    """Each module's path under rdmatool/ -> its source."""
    return {path.relative_to(PACKAGE).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in path.parts}


def _functions(source: str):
    """(name, lines from its `def` to its last line, docstring) of every function, nested ones too."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node.name, node.end_lineno - node.lineno + 1, ast.get_docstring(node) or ""


def test_no_module_is_over_600_lines() -> None:
    modules = _modules()
    assert len(modules) > 100  # the walk found the package
    lengths = {name: len(source.splitlines()) for name, source in modules.items()}
    over = {name: n for name, n in lengths.items() if n > MAX_MODULE_LINES and name not in LONG_MODULES}
    assert not over, f"modules over {MAX_MODULE_LINES} lines (split them by what their parts do): {over}"
    stale = {name for name in LONG_MODULES if lengths.get(name, 0) <= MAX_MODULE_LINES}
    assert not stale, f"within the limit now, take them out of LONG_MODULES: {stale}"


def test_no_function_is_over_80_lines_but_the_documented_hot_loops() -> None:
    over, hot, lengths = {}, {}, {}
    for name, source in _modules().items():
        for function, lines, doc in _functions(source):
            lengths[(name, function)] = max(lines, lengths.get((name, function), 0))
            if (name, function) in HOT_LOOPS:
                hot[(name, function)] = (lines, doc)
            elif lines > MAX_FUNCTION_LINES and (name, function) not in LONG_FUNCTIONS:
                over[f"{name}:{function}"] = lines
    assert not over, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {over}"
    stale = {key for key in LONG_FUNCTIONS if lengths.get(key, 0) <= MAX_FUNCTION_LINES}
    assert not stale, f"within the limit now, take them out of LONG_FUNCTIONS: {stale}"
    assert set(hot) == HOT_LOOPS, f"hot loops not found: {HOT_LOOPS - set(hot)}"
    for (name, function), (lines, doc) in hot.items():
        assert lines > MAX_FUNCTION_LINES, f"{name}:{function} fits the limit now: take it out of HOT_LOOPS"
        assert "tests/test_code_sizes.py" in doc, f"{name}:{function}: its docstring must say why it is one loop"


def test_at_most_12_modules_sit_flat_in_the_package() -> None:
    flat = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert "__init__.py" in flat
    assert len(flat) <= MAX_FLAT_MODULES, (
        f"{len(flat)} modules directly in rdmatool/: {flat}; put a new one in the package of its pipeline step")


def test_the_facts_table_wrappers_are_gone() -> None:
    files = [path for path in PACKAGE.rglob("*") if path.is_file() and "__pycache__" not in path.parts]
    assert any(path.suffix == ".json" for path in files)  # every file, not the modules only
    found = [f"{path.relative_to(PACKAGE)}: {word}" for path in files
             for word in GONE if word in path.read_text(encoding="utf-8", errors="replace")]
    assert not found, f"left from the facts table's former wrappers: {found}"
