"""The configuration file (rdmatool.config): which file is read, what it may say, the FILE:LINE errors, and the
defaults it gives the commands (an option given on the command line wins)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rdmatool import config
from rdmatool.cli import app
from rdmatool.tune.suggest.context import DEFAULT_PROFILE
from tests.helpers import REPO

runner = CliRunner()
DEMO = REPO / "examples" / "demo-bundle"
BASELINE = REPO / "baselines" / "demo-healthy.json"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def env_for(tmp_path: Path, **extra: str) -> dict[str, str]:
    """An environment whose home is tmp_path, without RDMATOOL_CONFIG unless given."""
    return {"HOME": str(tmp_path), **extra}


# --- which file ------------------------------------------------------------------------------------------------


def test_the_user_file_is_read_from_the_home_config_folder(tmp_path: Path) -> None:
    write(tmp_path / ".config" / "rdmatool" / "config.yaml", "store: nightly\n")
    cfg = config.load(env_for(tmp_path))
    assert cfg.path == str(tmp_path / ".config" / "rdmatool" / "config.yaml")
    assert cfg.store == str(tmp_path / ".config" / "rdmatool" / "nightly")  # relative to the file's folder


def test_xdg_config_home_moves_the_user_file(tmp_path: Path) -> None:
    write(tmp_path / "xdg" / "rdmatool" / "config.yaml", "inventory: /srv/inv.yaml\n")
    cfg = config.load(env_for(tmp_path, XDG_CONFIG_HOME=str(tmp_path / "xdg")))
    assert cfg.inventory == "/srv/inv.yaml"


def test_rdmatool_config_wins_and_files_are_not_merged(tmp_path: Path) -> None:
    write(tmp_path / ".config" / "rdmatool" / "config.yaml", "store: from-home\nplaybooks: /home/playbooks\n")
    chosen = write(tmp_path / "chosen.yaml", "store: /from/env\n")
    cfg = config.load(env_for(tmp_path, RDMATOOL_CONFIG=str(chosen)))
    assert (cfg.path, cfg.store) == (str(chosen), "/from/env")
    assert cfg.playbooks is None  # the home file is not read at all: the first file found is the whole config


def test_rdmatool_config_empty_means_no_file(tmp_path: Path) -> None:
    write(tmp_path / ".config" / "rdmatool" / "config.yaml", "store: from-home\n")
    cfg = config.load(env_for(tmp_path, RDMATOOL_CONFIG=""))
    assert cfg.path is None and cfg.store is None


def test_rdmatool_config_naming_no_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match=r"missing\.yaml: no such file \(RDMATOOL_CONFIG"):
        config.load(env_for(tmp_path, RDMATOOL_CONFIG=str(tmp_path / "missing.yaml")))


def test_no_file_anywhere_is_no_configuration(tmp_path: Path) -> None:
    cfg = config.load(env_for(tmp_path))
    assert cfg.path is None
    assert cfg.searched[0] == str(tmp_path / ".config" / "rdmatool" / "config.yaml")
    assert cfg.searched[-1] == str(config.SYSTEM_FILE)


# --- what it may say -------------------------------------------------------------------------------------------


def test_every_key_and_its_line(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "# site defaults\ninventory: inv.yaml\nstore: ~/baselines\nplaybooks: /pb\n"
                                      "gate_profile: gate.yaml\nsite:\n  rtt_us: 25.5\n  roce_priority: 4\n"
                                      "  roce_dscp: 24\n")
    cfg = config.read(path)
    assert cfg.inventory == str(tmp_path / "inv.yaml")
    assert cfg.store == str(Path("~/baselines").expanduser())
    assert (cfg.playbooks, cfg.gate_profile) == ("/pb", str(tmp_path / "gate.yaml"))
    assert cfg.site == {"rtt_us": 25.5, "roce_priority": 4, "roce_dscp": 24}
    assert cfg.source("inventory") == f"{path}:2"
    assert cfg.source("site.roce_priority") == f"{path}:8"
    assert cfg.source("site.cnp_dscp") is None


def test_an_empty_file_sets_nothing(tmp_path: Path) -> None:
    cfg = config.read(write(tmp_path / "c.yaml", "# nothing yet\n"))
    assert cfg.path and cfg.store is None and cfg.site == {}


@pytest.mark.parametrize(("text", "line", "message"), [
    ("store: a\nstroe: b\n", 2, "unknown key 'stroe'"),
    ("site:\n  rtt_us: 10\n  roce_prio: 3\n", 3, "unknown site key 'roce_prio'"),
    ("site:\n  roce_priority: 9\n", 2, "site.roce_priority takes a whole number from 0 to 7, not 9"),
    ("site:\n  roce_dscp: true\n", 2, "site.roce_dscp takes a whole number from 0 to 63"),
    ("site:\n  rtt_us: -1\n", 2, "site.rtt_us takes a positive finite number"),
    ("site:\n  rtt_us: .inf\n", 2, "site.rtt_us takes a positive finite number, not inf"),
    ("site:\n  rtt_us: .nan\n", 2, "site.rtt_us takes a positive finite number, not nan"),
    ("\nsite: {mtu: 9000, cable_length_m: -.inf}\n", 2, "site.cable_length_m takes a positive finite number"),
    ("site:\n  roce_dscp: .inf\n", 2, "site.roce_dscp takes a whole number from 0 to 63, not inf"),
    ("site:\n  rtt_us: lots\n", 2, "site.rtt_us takes a positive finite number, not 'lots'"),
    ("site:\n  roce_mtu: 1500\n", 2, "site.roce_mtu takes one of 256, 512, 1024, 2048, 4096"),
    ("site: fast\n", 1, "site is a mapping"),
    ("\n\ninventory: [a, b]\n", 3, "inventory: takes a path"),
    ("- store\n", 1, "a configuration file is a mapping"),
    ("store: [unclosed\n", 2, "invalid YAML"),
])
def test_bad_files_name_the_file_and_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = write(tmp_path / "c.yaml", text)
    with pytest.raises(config.ConfigError) as caught:
        config.read(path)
    assert str(caught.value).startswith(f"{path}:{line}: "), caught.value
    assert message in str(caught.value)


def test_site_keys_are_the_suggesters_profile_keys() -> None:
    # The file may only set what the suggesters read, under the same names (their defaults fill the rest).
    assert set(config.SITE_KEYS) <= set(DEFAULT_PROFILE)


# --- the commands ----------------------------------------------------------------------------------------------


def test_a_bad_file_stops_any_command_with_one_line_and_exit_2(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "site:\n  roce_priority: 8\n")
    result = runner.invoke(app, ["baseline", "list"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"rdmatool: {path}:2: site.roce_priority takes a whole number from 0 to 7, not 8"]


def test_the_store_default_comes_from_the_file_and_the_option_wins(tmp_path: Path) -> None:
    (tmp_path / "site-store").mkdir()
    shutil.copy(BASELINE, tmp_path / "site-store" / "demo.json")
    path = write(tmp_path / "c.yaml", "store: site-store\n")
    from_file = runner.invoke(app, ["baseline", "list", "--format", "json"], env={"RDMATOOL_CONFIG": str(path)})
    assert from_file.exit_code == 0, from_file.output
    assert [e["name"] for e in json.loads(from_file.stdout)["baselines"]] == [json.loads(BASELINE.read_text())["name"]]
    explicit = runner.invoke(app, ["baseline", "list", "--store", str(tmp_path / "other"), "--json"],
                             env={"RDMATOOL_CONFIG": str(path)})
    assert explicit.exit_code == 0, explicit.output
    assert json.loads(explicit.stdout)["baselines"] == []


def test_the_inventory_default_comes_from_the_file(tmp_path: Path) -> None:
    write(tmp_path / "inv.ini", "[gpu]\ngpu01 ansible_host=10.0.0.1\ngpu02 ansible_host=10.0.0.2\n")
    path = write(tmp_path / "c.yaml", "inventory: inv.ini\n")
    result = runner.invoke(app, ["inventory", "show", "--format", "json"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 0, result.output
    assert [t["name"] for t in json.loads(result.stdout)["targets"]] == ["gpu01", "gpu02"]
    without = runner.invoke(app, ["inventory", "show"], env={"RDMATOOL_CONFIG": ""})
    assert without.exit_code == 2 and "give -i INVENTORY" in without.stderr


def test_the_playbooks_default_comes_from_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "playbooks: no-such-dir\n")
    result = runner.invoke(app, ["diagnose", str(DEMO), "--format", "json"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 2
    assert str(tmp_path / "no-such-dir") in result.stderr


def test_the_site_profile_reaches_the_suggested_settings(tmp_path: Path) -> None:
    def rationales(env: dict[str, str]) -> str:
        result = runner.invoke(app, ["diagnose", str(DEMO), "--format", "json"], env=env)
        assert result.exit_code == 1, result.output
        return " ".join(s["rationale"] for s in json.loads(result.stdout)["suggestions"])

    path = write(tmp_path / "c.yaml", "site:\n  rtt_us: 40\n")
    assert "RTT 10 µs" in rationales({"RDMATOOL_CONFIG": ""})
    with_site = rationales({"RDMATOOL_CONFIG": str(path)})
    assert "RTT 40 µs" in with_site and "RTT 10 µs" not in with_site


def test_config_show_says_where_each_value_comes_from(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "store: /srv/baselines\nsite:\n  roce_dscp: 24\n")
    result = runner.invoke(app, ["config", "show", "--format", "json"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    settings = {s["key"]: s for s in doc["settings"]}
    assert doc["file"] == str(path)
    assert settings["store"] == {"key": "store", "value": "/srv/baselines", "source": f"{path}:1"}
    assert settings["site.roce_dscp"] == {"key": "site.roce_dscp", "value": 24, "source": f"{path}:3"}
    assert settings["site.roce_priority"] == {"key": "site.roce_priority", "value": DEFAULT_PROFILE["roce_priority"],
                                              "source": "default"}
    # wide enough for a line per setting (at 80 a long source goes on under its value: tests/test_views_80_columns.py)
    table = runner.invoke(app, ["config", "show"], env={"RDMATOOL_CONFIG": str(path), "COLUMNS": "200"})
    assert table.exit_code == 0
    assert f"config file: {path}" in table.stdout
    assert any(line.split()[:2] == ["store", "/srv/baselines"] and line.endswith(f"({path}:1)")
               for line in table.stdout.splitlines())


@pytest.mark.parametrize("value", [".inf", ".nan", "-.inf"])
def test_config_show_and_diagnose_refuse_an_infinite_rtt_naming_the_line(tmp_path: Path, value: str) -> None:
    """`rtt_us: .inf` passed `config show` and crashed `diagnose` deep in the ECN thresholds."""
    path = write(tmp_path / "c.yaml", f"store: /srv/baselines\nsite: {{rtt_us: {value}}}\n")
    for argv in (["config", "show"], ["diagnose", str(DEMO)]):
        result = runner.invoke(app, argv, env={"RDMATOOL_CONFIG": str(path)})
        assert result.exit_code == 2, (argv, result.output)
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith(f"rdmatool: {path}:2: site.rtt_us takes a positive finite number, not "), line


def test_config_show_without_a_file(tmp_path: Path) -> None:
    result = runner.invoke(app, ["config", "show"], env={"RDMATOOL_CONFIG": "", "COLUMNS": "200"})
    assert result.exit_code == 0
    assert "config file: none (RDMATOOL_CONFIG is set and empty)" in result.stdout
    assert any(line.split()[:2] == ["store", "baselines"] and line.endswith("(default)")
               for line in result.stdout.splitlines())


@pytest.mark.slow  # two HTML reports of the demo fabric
def test_the_site_profile_reaches_the_html_report(tmp_path: Path) -> None:
    import re

    def proposed_ecn(env: dict[str, str], out: Path) -> set[str]:
        result = runner.invoke(app, ["report", str(DEMO), "-o", str(out)], env=env)
        assert result.exit_code == 1, result.output  # the demo fabric fails; the report is written
        return set(re.findall(r"Kmin [0-9.]+ [KM]iB, Kmax [0-9.]+ [KM]iB", out.read_text(encoding="utf-8")))

    path = write(tmp_path / "c.yaml", "site:\n  rtt_us: 40\n")
    default = proposed_ecn({"RDMATOOL_CONFIG": ""}, tmp_path / "default.html")
    with_site = proposed_ecn({"RDMATOOL_CONFIG": str(path)}, tmp_path / "site.html")
    assert default and with_site and default != with_site  # a longer RTT moves the proposed ECN thresholds


def test_the_gate_takes_its_inventory_and_profile_from_the_file(tmp_path: Path) -> None:
    write(tmp_path / "gate.yaml", "counters_window_s: 5\nbandwith: {}\n")  # a typo the gate profile refuses
    path = write(tmp_path / "c.yaml", "inventory: missing-inventory.yaml\ngate_profile: gate.yaml\n")
    result = runner.invoke(app, ["gate"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 2
    assert f"{tmp_path / 'gate.yaml'}:1: unknown key(s) ['bandwith']" in result.stderr  # the file's profile was read
    write(tmp_path / "gate.yaml", "counters_window_s: 5\n")
    result = runner.invoke(app, ["gate"], env={"RDMATOOL_CONFIG": str(path)})
    assert result.exit_code == 2
    assert str(tmp_path / "missing-inventory.yaml") in result.stderr  # and its inventory, for want of -i
    replay = runner.invoke(app, ["gate", "--replay", str(tmp_path / "no-bundle")], env={"RDMATOOL_CONFIG": str(path)})
    assert replay.exit_code == 2
    assert "missing-inventory" not in replay.stderr  # --replay needs no inventory: the file's is not used


def test_collect_and_diagnose_take_the_inventory_from_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "c.yaml", "inventory: missing-inventory.yaml\n")
    for args in (["collect", "-o", str(tmp_path / "b")], ["diagnose"]):
        result = runner.invoke(app, args, env={"RDMATOOL_CONFIG": str(path)})
        assert result.exit_code == 2, (args, result.output)
        assert str(tmp_path / "missing-inventory.yaml") in result.stderr, args
    local = runner.invoke(app, ["collect", "--local", "-o", str(tmp_path / "b"), "--interval", "0"],
                          env={"RDMATOOL_CONFIG": str(path)})
    assert "missing-inventory" not in local.stderr  # --local reads this machine: the file's inventory is not used


def test_pcap_takes_the_roce_class_from_the_site_profile(tmp_path: Path) -> None:
    from tests.capture.build import roce
    from tests.capture.build import write as write_pcap

    capture = write_pcap(tmp_path / "c.pcap", [roce(dscp=24, psn=i) for i in range(20)])
    path = write(tmp_path / "c.yaml", "site:\n  roce_dscp: 24\n  roce_priority: 4\n")

    def options(args: list[str], env: dict[str, str]) -> dict:
        result = runner.invoke(app, ["pcap", str(capture), "--format", "json", *args], env=env)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.stdout)["capture"]

    default = options([], {"RDMATOOL_CONFIG": ""})
    assert (default["roce_dscp"], default["roce_priority"]) == (26, 3)
    site = options([], {"RDMATOOL_CONFIG": str(path)})
    assert (site["roce_dscp"], site["roce_priority"]) == (24, 4)
    assert options(["--roce-dscp", "30"], {"RDMATOOL_CONFIG": str(path)})["roce_dscp"] == 30  # the option wins


# --- the site profile: the file's `site` and --site ------------------------------------------------------------


def test_the_site_defaults_are_kept_in_one_place() -> None:
    profile = config.site_profile()
    assert {k: profile[k] for k in config.SITE_DEFAULTS} == config.SITE_DEFAULTS
    assert profile["roce_tos"] == config.SITE_DEFAULTS["roce_dscp"] * 4 + config.ECT0
    assert {k: DEFAULT_PROFILE[k] for k in config.SITE_DEFAULTS} == config.SITE_DEFAULTS  # the suggesters' too
    site = config.site_profile({"roce_priority": 4, "roce_dscp": 34})
    assert (site["roce_priority"], site["roce_dscp"], site["roce_tos"]) == (4, 34, 138)
    assert site["cnp_dscp"] == config.SITE_DEFAULTS["cnp_dscp"]


def test_the_site_option_is_checked_as_the_file_is() -> None:
    assert config.parse_site_option(["roce_priority=4,roce_dscp=34", "rtt_us=25.5"]) == {
        "roce_priority": 4, "roce_dscp": 34, "rtt_us": 25.5}
    assert config.parse_site_option(None) == {}
    for given, message in (("roce_priority", "--site roce_priority: takes KEY=VALUE"),
                           ("roce_prio=4", "--site roce_prio=4: unknown site key 'roce_prio'"),
                           ("roce_priority=9", "site.roce_priority takes a whole number from 0 to 7, not '9'"),
                           ("roce_dscp=high", "site.roce_dscp takes a whole number from 0 to 63, not 'high'"),
                           ("rtt_us=inf", "site.rtt_us takes a positive finite number, not 'inf'")):
        with pytest.raises(config.ConfigError) as caught:
            config.parse_site_option([given])
        assert message in str(caught.value), caught.value


def _fixes(args: list[str], env: dict[str, str], tmp_path: Path) -> str:
    """The findings' fix texts of one command on the demo bundle, or the HTML report (which shows the suggestions'
    `priority N only`)."""
    if args[0] == "report":
        out = tmp_path / "report.html"
        result = runner.invoke(app, ["report", str(DEMO), "-o", str(out), *args[1:]], env=env)
        assert result.exit_code == 1, result.output
        return out.read_text()
    result = runner.invoke(app, [*args[:1], *([] if args[0] == "gate" else [str(DEMO)]), *args[1:], "--json"],
                           env=env)
    assert result.exit_code == 1, result.output
    return " ".join(f["fix"] for f in json.loads(result.stdout)["findings"])


@pytest.mark.parametrize("command", [["diagnose"], ["gate", "--replay", str(DEMO)], ["report"]],
                         ids=["diagnose", "gate", "report"])
def test_diagnose_gate_and_report_judge_the_sites_class(tmp_path: Path, command: list[str]) -> None:
    default = _fixes(command, {"RDMATOOL_CONFIG": ""}, tmp_path)
    assert "priority 3 only" in default and "priority 4 only" not in default
    path = write(tmp_path / "c.yaml", "site:\n  roce_priority: 5\n  roce_dscp: 40\n")
    from_file = _fixes(command, {"RDMATOOL_CONFIG": str(path)}, tmp_path)
    assert "priority 5 only" in from_file and "priority 3 only" not in from_file
    option = _fixes([*command, "--site", "roce_priority=4,roce_dscp=34"], {"RDMATOOL_CONFIG": str(path)}, tmp_path)
    assert "priority 4 only" in option and "priority 5 only" not in option  # the option wins


@pytest.mark.parametrize("command", [["diagnose", str(DEMO)], ["gate", "--replay", str(DEMO)],
                                     ["report", str(DEMO), "-o", "out.html"]], ids=["diagnose", "gate", "report"])
def test_a_bad_site_option_is_one_line_and_exit_2(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--site", "roce_priority=8"], env={"RDMATOOL_CONFIG": ""})
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        "rdmatool: --site roce_priority=8: site.roce_priority takes a whole number from 0 to 7, not '8'"]
