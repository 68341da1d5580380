"""rdmatool.platforms: one module per OS, each declaring the whole interface; the registry; the enum and aliases
built from it."""

from __future__ import annotations

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
