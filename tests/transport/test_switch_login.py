"""How long a switch's login may wait, and that commands get their own timeout afterwards (rdmatool.transport.switch).

A unit test: a stand-in for netmiko's connection class records what it was given; the real drivers against the
simulated fabric are in tests/e2e/test_collect.py (a switch whose CLI starts after netmiko's fixed 20 s).
"""

from __future__ import annotations

import time

import pytest
from netmiko.exceptions import ReadTimeout

from rdmatool.model import Platform, Target, TargetKind
from rdmatool.transport import switch, switch_drivers


class _Key:
    def get_name(self) -> str:
        return "ssh-ed25519"

    def get_base64(self) -> str:
        return "AAAAC3NzaC1lZDI1NTE5AAAAIHVzZWQtb25seS1ieS10aGlzLXRlc3QtMDEyMzQ1Ng"


class _Connection:
    """What the session sees of a netmiko connection; records the override each step ran under."""

    fail_login: bool = False
    fail_enable: bool = False
    set_up_s: float = 0.0  # how long the session set-up takes

    def __init__(self, **options) -> None:
        self.options = options
        self.read_timeout_override = options.get("read_timeout_override")
        self.enabled_under: float | None = None
        self.disconnected = False
        time.sleep(self.set_up_s)
        if self.fail_login:
            raise ReadTimeout("Pattern not detected: '[>#]' in output.")

    def enable(self) -> None:
        self.enabled_under = self.read_timeout_override
        if self.fail_enable:
            raise ReadTimeout("Pattern not detected: '#' in output.")

    def disconnect(self) -> None:
        self.disconnected = True


@pytest.fixture
def fake_netmiko(monkeypatch):
    monkeypatch.setattr(switch, "scan_and_check", lambda *args: _Key())
    made: list[_Connection] = []

    class Recorded(_Connection):
        def __init__(self, **options) -> None:
            made.append(self)
            super().__init__(**options)

    monkeypatch.setattr(switch_drivers, "connect_handler", lambda platform: Recorded)
    return Recorded, made


def _target() -> Target:
    return Target(name="leaf03", address="192.0.2.3", kind=TargetKind.SWITCH, platform=Platform.ONYX)


def test_without_a_deadline_the_login_waits_as_long_as_netmiko_does() -> None:
    assert switch.login_read_timeout(None) == switch.NETMIKO_LOGIN_READ_S == 20.0


def test_the_login_may_take_until_the_deadline_and_at_least_a_second() -> None:
    assert switch.login_read_timeout(time.monotonic() + 45) == pytest.approx(45, abs=0.5)
    assert switch.login_read_timeout(time.monotonic() - 5) == 1.0


def test_login_reads_wait_for_the_deadline_then_commands_use_their_own_timeout(fake_netmiko) -> None:
    _, made = fake_netmiko
    session = switch.SwitchSession(_target(), known=None, connect_timeout=10, deadline=time.monotonic() + 50)
    conn = made[0]
    assert conn.options["read_timeout_override"] == pytest.approx(50, abs=0.5)
    assert conn.enabled_under == pytest.approx(50, abs=0.5)  # `enable` is part of the login (Onyx)
    assert session.conn.read_timeout_override is None  # else it would replace every command's read timeout


def test_enable_waits_for_what_the_session_set_up_left_of_the_deadline(fake_netmiko) -> None:
    handler, made = fake_netmiko
    handler.set_up_s = 1.0
    switch.SwitchSession(_target(), known=None, connect_timeout=10, deadline=time.monotonic() + 50)
    assert made[0].options["read_timeout_override"] == pytest.approx(50, abs=0.3)
    assert made[0].enabled_under == pytest.approx(49, abs=0.3)


def test_a_cli_that_shows_no_prompt_is_one_clear_error(fake_netmiko) -> None:
    handler, _ = fake_netmiko
    handler.fail_login = True
    said = r"logged in, but the CLI gave no prompt \(or did not answer its session set-up\) within 3[01] s"
    with pytest.raises(switch.SwitchLoginTimeout, match=said):
        switch.SwitchSession(_target(), known=None, connect_timeout=10, deadline=time.monotonic() + 31)


def test_a_cli_that_never_answers_enable_is_closed_and_named(fake_netmiko) -> None:
    handler, made = fake_netmiko
    handler.fail_enable = True
    with pytest.raises(switch.SwitchLoginTimeout, match="did not answer `enable`"):
        switch.SwitchSession(_target(), known=None, connect_timeout=10, deadline=time.monotonic() + 9)
    assert made[0].disconnected
