"""rdmatool.platforms: one module per OS, each declaring the whole interface; the registry; the enum and aliases
built from it."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

from rdmatool import platforms
from rdmatool.inventory.targets import ANSIBLE_OS
from rdmatool.model import Platform


def test_every_module_declares_the_whole_interface() -> None:
    for module in platforms.MODULES:
        wanted = platforms.COMMON + (platforms.SWITCH if module.KIND == "switch" else ())
        assert [name for name in wanted if not hasattr(module, name)] == [], module.NAME
        assert module.KIND in ("host", "switch") and module.NAME in module.ALIASES


def test_the_registry_lists_each_module_once_and_the_enum_follows_it() -> None:
    names = [m.NAME for m in platforms.MODULES]
    assert len(set(names)) == len(names) == len({m.SUGGESTION_KEY for m in platforms.MODULES})
    assert [p.value for p in Platform] == names
    assert Platform.SONIC == "sonic" and Platform("nxos") is Platform.NXOS
    assert platforms.named(Platform.ONYX) is platforms.onyx and platforms.named("onyx") is platforms.onyx
    assert platforms.switch(Platform.LINUX) is None and platforms.keyed("host") is platforms.linux


def test_an_alias_names_one_platform() -> None:
    aliases = [a for m in platforms.MODULES for a in m.ALIASES]
    assert len(set(aliases)) == len(aliases)
    assert ANSIBLE_OS["arista.eos.eos"] is Platform.EOS and ANSIBLE_OS["cumulus_linux"] is Platform.CUMULUS


def test_the_gathered_switch_commands_are_every_platforms_read_only_shows() -> None:
    """commands.SWITCH_COMMANDS, the audited list, holds each switch module's commands whole, and every one of
    them only shows: no clear, no configuration verb, one line."""
    from rdmatool import commands

    assert list(commands.SWITCH_COMMANDS) == [Platform(m.NAME) for m in platforms.SWITCHES]
    for platform, listed in commands.SWITCH_COMMANDS.items():
        assert listed == platforms.named(platform).SHOW_COMMANDS and listed[0].parser == commands.LLDP_PARSER[platform]
        for cmd in listed:
            words = cmd.command.split()
            assert words[:2] in (["lldpctl", "-f"], ["nv", "show"]) or words[0] == "show", cmd.command
            assert not {"clear", "reset", "-r", "set"} & set(words) and not set(";&`$\n") & set(cmd.command), cmd.command
            assert ("{port}" in cmd.command) == cmd.per_port, cmd.command
    assert sum(len(c) for c in commands.SWITCH_COMMANDS.values()) == 43  # a command added or gone shows here


def test_a_per_port_command_takes_only_the_platforms_own_port_names() -> None:
    from rdmatool import commands

    plan = commands.switch_plan(Platform.ONYX, ["Eth1/2"], commands.SNAPSHOT_FULL)
    assert "show interfaces ethernet 1/2 congestion-control" in [p.command for p in plan]
    assert not commands.valid_port_name(Platform.ONYX, "swp1") and not commands.valid_port_name(Platform.LINUX, "x")
    assert commands.valid_port_name(Platform.CUMULUS, "swp1s0") and commands.valid_port_name("eos", "Ethernet1/1")


# --- nothing outside rdmatool/platforms branches per platform -----------------------------------------------------

_PACKAGE = Path(platforms.__file__).resolve().parent.parent
_COMPARE = {"==", "!=", "is"}


def _dotted_before(tokens: list, i: int) -> list[str]:
    """The dotted name ending just before tokens[i] (`side.platform`, `Platform.ONYX`), last part first."""
    names, j = [], i - 1
    while j >= 0 and tokens[j].type == tokenize.NAME:
        names.append(tokens[j].string)
        if j == 0 or tokens[j - 1].string != ".":
            break
        j -= 2
    return names


def _dotted_after(tokens: list, i: int) -> list[str]:
    names, j = [], i + 1
    while j < len(tokens) and tokens[j].type == tokenize.NAME:
        names.append(tokens[j].string)
        if j + 1 >= len(tokens) or tokens[j + 1].string != ".":
            break
        j += 2
    return names


def _names_a_switch_os(tokens: list, i: int) -> bool:
    """A switch OS's name as a string literal (`"onyx"`), or its member of the enum (`Platform.ONYX`)."""
    tok = tokens[i]
    if tok.type == tokenize.STRING:
        return tok.string[0] in "\"'" and tok.string.strip("\"'") in {m.NAME for m in platforms.SWITCHES}
    members = {m.NAME.upper() for m in platforms.SWITCHES}
    return tok.type == tokenize.NAME and tok.string in members and _dotted_before(tokens, i + 1)[-1:] == ["Platform"]


def _compares_a_platform(tokens: list, i: int) -> bool:
    """`platform == …`, `… is Platform.X`, `side.platform != …`, `platform in ("…", …)`; not `platform is None`."""
    text, following = tokens[i].string, [t.string for t in tokens[i + 1:i + 3]]
    literal = text == "in" and following[:1] in (["("], ["["], ["{"])
    if text not in _COMPARE and not literal:
        return False
    after = i + 1 if following[:1] == ["not"] else i
    if text == "is" and following[after - i:after - i + 1] == ["None"]:
        return False
    names = _dotted_before(tokens, i) + ([] if literal else _dotted_after(tokens, after))
    return any("platform" in n.lower() for n in names)


def _platform_branches(path: Path) -> list[str]:
    """The lines of one file that decide something per platform (see the two tests above)."""
    source = path.read_text()
    words = ["platform", *(m.NAME for m in platforms.SWITCHES)]
    if not any(word in source.lower() for word in words):
        return []  # most modules: nothing to tokenize
    skipped = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT)
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in skipped]
    found = [t for i, t in enumerate(tokens) if _names_a_switch_os(tokens, i) or _compares_a_platform(tokens, i)]
    shown = path.relative_to(_PACKAGE.parent) if path.is_relative_to(_PACKAGE.parent) else path
    return [f"{shown}:{t.start[0]}: {t.line.strip()}" for t in found]


def test_no_module_outside_platforms_branches_per_platform() -> None:
    found = [hit for path in sorted(_PACKAGE.rglob("*.py")) if "platforms" not in path.relative_to(_PACKAGE).parts
             for hit in _platform_branches(path)]
    assert found == [], "ask the platform's module (rdmatool.platforms) instead:\n" + "\n".join(found)


def test_the_platform_grep_finds_what_it_forbids(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('if side.platform == "host":\n    x = 1\nif Platform.ONYX is p:\n    y = 2\n'
                      'if platform in ("a", "b"):\n    z = 3\nw = "nxos"\nif platform is None:\n    v = 4\n'
                      'if x.kind == "port":\n    u = 5\n# platform == "sonic" in a comment\n')
    assert [hit.split(":")[1] for hit in _platform_branches(sample)] == ["1", "3", "3", "5", "7"]
