"""Smoke test of the simulated fabric (tests/fabric): real sshd, real paramiko and netmiko clients.

One fabric (the degraded scenario, so faults are visible too) is started once for the module.
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time

import paramiko
import pytest

from rdmatool import parsers
from tests.fabric.fixtures import fabric_fixture
from tests.fabric.server import Fabric

pytestmark = pytest.mark.e2e

IB_SYSFS = "/sys/class/infiniband/mlx5_1"
# parser name -> (target, command run over SSH). Onyx per-port counters need the echoed command line in front
# (the collector keeps it), so the command itself is prepended to the captured output for those.
PARSER_CASES: dict[str, tuple[str, str]] = {
    "ibstat": ("gpu01", "ibstat"),
    "ibv_devinfo": ("gpu01", "ibv_devinfo -v"),
    "perfquery": ("gpu01", "perfquery -x -C mlx5_0 -P 1"),
    "sysfs_counters": ("gpu01", f"grep -H -r . {IB_SYSFS}/fw_ver {IB_SYSFS}/board_id {IB_SYSFS}/hca_type "
                                f"{IB_SYSFS}/ports/*/state {IB_SYSFS}/ports/*/phys_state {IB_SYSFS}/ports/*/rate "
                                f"{IB_SYSFS}/ports/*/link_layer {IB_SYSFS}/ports/*/counters "
                                f"{IB_SYSFS}/ports/*/hw_counters"),
    "dcqcn_sysfs": ("gpu04", "grep -H -r . /sys/class/net/ens1f0np0/ecn"),
    "ethtool_stats": ("gpu02", "ethtool -S ens1f0np0"),
    "ethtool_info": ("gpu01", "ethtool -i ens1f0np0"),
    "mlnx_qos": ("gpu03", "mlnx_qos -i ens1f0np0"),
    "show_gids": ("gpu01", "show_gids"),
    "lldpctl": ("gpu01", "lldpctl -f json"),
    "loadavg": ("stor01", "cat /proc/loadavg"),
    "psi": ("stor01", "grep -H . /proc/pressure/io /proc/pressure/cpu"),
    "perftest": ("gpu01", "ib_write_bw -d mlx5_1 --report_gbits >/dev/null & ib_write_bw -d mlx5_1 --report_gbits "
                          "127.0.1.1; wait"),
    "sonic_pfc_counters": ("leaf01", "show pfc counters"),
    "sonic_pfc_priority": ("leaf01", "show pfc priority"),
    "sonic_queue_counters": ("leaf01", "show queue counters"),
    "sonic_wred_counters": ("leaf01", "show queue wredcounters"),
    "sonic_ecn": ("leaf01", "show ecn"),
    "sonic_pfcwd_stats": ("leaf01", "show pfcwd stats"),
    "sonic_pfcwd_config": ("leaf01", "show pfcwd config"),
    "sonic_pg_drop": ("leaf01", "show priority-group drop counters"),
    "sonic_portstat": ("leaf01", "show interfaces counters"),
    "sonic_interface_status": ("leaf01", "show interfaces status"),
    "cumulus_pfc_stats": ("leaf02", "nv show interface swp1 counters qos pfc-stats"),
    "cumulus_port_stats": ("leaf02", "nv show interface swp1 counters qos port-stats"),
    "cumulus_egress_queue": ("leaf02", "nv show interface swp1 counters qos egress-queue-stats"),
    "cumulus_ingress_buffer": ("leaf02", "nv show interface swp1 counters qos ingress-buffer-stats"),
    "cumulus_roce": ("leaf02", "nv show qos roce"),
    "cumulus_roce_counters": ("leaf02", "nv show interface swp1 qos roce counters"),
    "cumulus_roce_status": ("leaf02", "nv show interface swp1 qos roce status"),
    "cumulus_counters_errors": ("leaf02", "nv show interface swp1 counters errors"),
    "cumulus_interface_status": ("leaf02", "nv show interface -o json"),
    "onyx_pfc_counters": ("leaf03", "show interfaces ethernet 1/1 counters pfc prio 3"),
    "onyx_ecn": ("leaf03", "show interfaces ethernet 1/1 congestion-control"),
    "onyx_dcb_pfc": ("leaf03", "show dcb priority-flow-control"),
    "onyx_lldp_neighbors": ("leaf03", "show lldp remote"),
    "onyx_interface_counters": ("leaf03", "show interfaces ethernet 1/1 counters"),
    "onyx_interface_status": ("leaf03", "show interfaces ethernet status"),
    "eos_pfc_counters": ("leaf04", "show priority-flow-control counters | json"),
    "eos_ecn": ("leaf04", "show qos interfaces ecn counters queue | json"),
    "eos_lldp_neighbors": ("leaf04", "show lldp neighbors | json"),
    "eos_interface_errors": ("leaf04", "show interfaces counters errors | json"),
    "eos_interface_status": ("leaf04", "show interfaces status | json"),
    "nxos_pfc": ("leaf05", "show interface priority-flow-control | json"),
    "nxos_queuing": ("leaf05", "show queuing interface | json"),
    "nxos_interface": ("leaf05", "show interface | json"),
    "nxos_lldp_neighbors": ("leaf05", "show lldp neighbors | json"),
}
ECHOED = {"onyx_pfc_counters", "onyx_interface_counters"}
NETMIKO_CASES = [  # (switch, device_type, command, expected substrings)
    ("leaf01", "linux", "show pfc counters", ["Port Rx", "Ethernet0", "PFC3"]),
    ("leaf02", "linux", "nv show interface swp1 counters qos pfc-stats", ["switch-priority", "rx-pause-frames"]),
    ("leaf03", "mellanox_mlnxos", "show dcb priority-flow-control", ["Priority Enabled List: 3", "Eth1/1"]),
    ("leaf04", "arista_eos", "show priority-flow-control counters | json", ['"interfaceCounters"', "Ethernet1"]),
    ("leaf05", "cisco_nxos", "show interface priority-flow-control | json", ["TABLE_qosmgr_ifs", "Ethernet1/1"]),
]


fabric = fabric_fixture("degraded")


def client(fab: Fabric, name: str) -> paramiko.SSHClient:
    c = paramiko.SSHClient()
    c.load_host_keys(str(fab.known_hosts))
    c.set_missing_host_key_policy(paramiko.RejectPolicy())
    t = fab.target(name)
    c.connect(t["address"], port=t["port"], username="root", key_filename=str(fab.client_key), allow_agent=False,
              look_for_keys=False, timeout=10)
    return c


def run(fab: Fabric, name: str, command: str, timeout: float = 15) -> tuple[int, str, str]:
    c = client(fab, name)
    try:
        _, out, err = c.exec_command(command, timeout=timeout)
        text, error = out.read().decode(), err.read().decode()
        return out.channel.recv_exit_status(), text, error
    finally:
        c.close()


def test_ibstat_names_the_scenario_devices(fabric: Fabric) -> None:
    for name in ("gpu01", "stor02"):
        host = fabric.scenario.target(name)
        rc, out, _ = run(fabric, name, "ibstat")
        assert rc == 0
        for nic in host.nics:
            assert f"CA '{nic.device}'" in out
            assert f"Firmware version: {nic.firmware}" in out


def test_counters_grow_between_reads(fabric: Fabric) -> None:
    path = "/sys/class/infiniband/mlx5_0/ports/1/counters"
    first = run(fabric, "gpu01", f"cat {path}/symbol_error {path}/port_xmit_data")[1].split()
    time.sleep(1.0)
    second = run(fabric, "gpu01", f"cat {path}/symbol_error {path}/port_xmit_data")[1].split()
    assert int(second[0]) > int(first[0])  # gpu01 mlx5_0 has a flapping cable
    assert int(second[1]) > int(first[1])


def test_host_faults(fabric: Fabric) -> None:
    assert run(fabric, "gpu09", "perfquery -x")[0] == 127  # missing tool, as a shell says it
    rc, out, _ = run(fabric, "gpu07", "cat /sys/class/infiniband/mlx5_0/ports/1/rate")
    assert out.strip() == "100 Gb/sec (1X NDR)"
    rc, out, _ = run(fabric, "gpu06", "ibstat mlx5_0")
    assert "State: Down" in out and "Physical state: Polling" in out
    t0 = time.time()
    with pytest.raises(TimeoutError):
        run(fabric, "gpu11", "ethtool -S ens1f0np0", timeout=1)  # hanging tool
    assert time.time() - t0 < 10
    rc, out, _ = run(fabric, "gpu01", "ib_write_bw -d mlx5_1 127.0.1.14")  # stor02: perftest_no_server
    assert rc == 1 and "Couldn't connect to 127.0.1.14:18515" in out


def test_a_session_does_not_read_the_login_shells_rc_file(fabric: Fabric) -> None:
    # sshd starts ForceCommand through root's login shell; bash reads ~/.bashrc there only as a top-level shell. The
    # fabric's SetEnv SHLVL=1 makes it a nested one, so a machine's dotfiles (a pyenv init forks ~200 processes)
    # never become part of a simulated host. The control is what a top-level bash leaves to the command it execs.
    if not pwd.getpwnam("root").pw_shell.endswith("bash"):
        pytest.skip("root's login shell is not bash: no rc file is read for a command session")
    env = {k: v for k, v in os.environ.items() if k != "SHLVL"}
    # like sshd's: `bash -c COMMAND`, whose one command bash execs in its own place
    top_level = subprocess.run(["bash", "-c", "sh -c 'echo $SHLVL'"], env=env, capture_output=True, text=True).stdout
    rc, out, _ = run(fabric, "gpu01", "echo $SHLVL")
    assert rc == 0 and int(out) == int(top_level) + 1


def test_unreachable_target_refuses(fabric: Fabric) -> None:
    t = fabric.target("gpu12")
    assert t["unreachable"] and t["port"] != fabric.port
    with pytest.raises((paramiko.ssh_exception.NoValidConnectionsError, OSError)):
        client(fabric, "gpu12")


def test_known_hosts_with_reject_policy(fabric: Fabric) -> None:
    """Strict host-key checking works per target: every [address]:port is in known_hosts (one shared host key)."""
    keys = paramiko.HostKeys(str(fabric.known_hosts))
    for t in fabric.targets:
        assert keys.lookup(f"[{t['address']}]:{t['port']}") is not None
    c = client(fabric, "leaf01")  # RejectPolicy: raises if the key were unknown
    c.close()
    stranger = paramiko.SSHClient()
    stranger.set_missing_host_key_policy(paramiko.RejectPolicy())
    with pytest.raises(paramiko.SSHException):
        stranger.connect("127.0.1.1", port=fabric.port, username="root", key_filename=str(fabric.client_key),
                         allow_agent=False, look_for_keys=False, timeout=10)


@pytest.mark.parametrize(("switch", "device_type", "command", "expected"), NETMIKO_CASES,
                         ids=[c[1] + "-" + c[0] for c in NETMIKO_CASES])
def test_netmiko_real_drivers(fabric: Fabric, switch: str, device_type: str, command: str,
                              expected: list[str]) -> None:
    from netmiko import ConnectHandler

    from rdmatool.model import Platform
    from rdmatool.transport.switch_drivers import connect_handler

    # Onyx: the driver collections use (netmiko's MLNX-OS driver reading its login to the prompt); netmiko's stock
    # one takes a `#` of the fake CLI's banner for the prompt now and then under load (benchmarks/README.md §3c).
    handler = connect_handler(Platform.ONYX) if device_type == "mellanox_mlnxos" else ConnectHandler
    conn = handler(device_type=device_type, host=fabric.address(switch), port=fabric.port, username="root",
                   use_keys=True, key_file=str(fabric.client_key), allow_agent=False, ssh_strict=True,
                   system_host_keys=False, alt_host_keys=True, alt_key_file=str(fabric.known_hosts), conn_timeout=10)
    try:
        if device_type == "mellanox_mlnxos":
            # Onyx logs in at `>`; netmiko's disconnect() probes config mode by waiting for `#` (10 s at `>`).
            conn.enable()
            assert conn.find_prompt().endswith("#")
        out = conn.send_command(command, read_timeout=15)
    finally:
        conn.disconnect()
    for text in expected:
        assert text in out


def _netmiko_options(fab: Fabric, switch: str) -> dict:
    return dict(device_type="mellanox_mlnxos", host=fab.address(switch), port=fab.port, username="root",
                use_keys=True, key_file=str(fab.client_key), allow_agent=False, ssh_strict=True,
                system_host_keys=False, alt_host_keys=True, alt_key_file=str(fab.known_hosts), conn_timeout=10,
                fast_cli=True)


def test_onyx_driver_finds_the_cli_prompt_past_a_banner_and_reads_what_the_cli_prints(fabric: Fabric) -> None:
    from netmiko import ConnectHandler

    from rdmatool.model import Platform
    from rdmatool.transport.switch_drivers import connect_handler

    driver = connect_handler(Platform.ONYX)
    assert driver is not ConnectHandler and driver.__mro__[1].__name__ == "MellanoxMlnxosSSH"
    command = "show dcb priority-flow-control"
    conn = driver(**_netmiko_options(fabric, "leaf03"))
    try:
        # the banner holds `#` and `>` before the prompt: the prompt found is still the CLI's own, before and after
        # enable, and a show command reads exactly what the CLI prints for it
        assert conn.base_prompt.strip() == "leaf03 [standalone: master]"
        assert conn.find_prompt().endswith(">")
        conn.enable()
        assert conn.find_prompt() == "leaf03 [standalone: master] #"
        shown = conn.send_command(command, read_timeout=15)
    finally:
        conn.disconnect()
    rc, printed, _ = run(fabric, "leaf03", command)  # the same CLI, one command over exec (no pty, no banner)
    assert rc == 0 and "Priority Enabled List: 3" in printed
    assert shown.split() == printed.split()
    assert connect_handler(Platform.EOS) is ConnectHandler  # the other platforms: netmiko's dispatcher


def test_onyx_driver_finds_the_prompt_when_the_banner_arrives_in_pieces(fabric: Fabric) -> None:
    """A switch under load: each banner line arrives in two pieces, the first ending at a `#` of its box. The login
    read stops there; the prompt must still be the CLI's, not `##` (what taking it right after that read gave)."""
    from rdmatool.model import Platform
    from rdmatool.transport.switch_drivers import connect_handler

    fabric.set_fault("slow_banner", "leaf03", value=0.3)
    try:
        conn = connect_handler(Platform.ONYX)(**_netmiko_options(fabric, "leaf03"))
        try:
            conn.enable()
            assert conn.base_prompt.strip() == "leaf03 [standalone: master]"
            assert "Priority Enabled List: 3" in conn.send_command("show dcb priority-flow-control", read_timeout=15)
        finally:
            conn.disconnect()
    finally:
        fabric.reset()  # the degraded scenario keeps its own faults for the other tests


@pytest.mark.parametrize("parser", sorted(PARSER_CASES))
def test_shim_output_parses(fabric: Fabric, parser: str) -> None:
    if parser not in parsers.names():
        pytest.skip(f"parser {parser} does not exist yet")
    target, command = PARSER_CASES[parser]
    # The perftest case starts a server and a client; under the suite's own load the shim's client waits up to 30 s
    # for its server (tests/perf/test_e2e.py), longer than the 15 s the one-shot commands get.
    rc, out, err = run(fabric, target, command, timeout=60 if parser == "perftest" else 15)
    assert rc == 0, err
    if parser in ECHOED:
        out = f"{command}\n{out}"
    samples = parsers.parse(parser, out)
    assert samples, f"{parser} produced no samples from:\n{out[:800]}"
    assert not [s for s in samples if s.metric == "tool_error"], out[:800]
