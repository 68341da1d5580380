"""The netmiko driver each switch platform is reached with (rdmatool.transport.switch_drivers)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from rdmatool import platforms
from rdmatool.model import Platform
from rdmatool.transport import switch_drivers

# A fresh interpreter (netmiko not yet imported) whose collecting threads ask for Onyx and other drivers at once,
# as `collect` does for a fleet's switches.
_RACE = textwrap.dedent("""
    import threading
    from rdmatool.model import Platform
    from rdmatool import platforms
    from rdmatool.transport.switch_drivers import connect_handler, prompt_driver
    got, errors = [], []
    start = threading.Barrier(18)  # all at once: the race a fleet's first switch connections run
    def one(platform):
        start.wait()
        try:  # the Onyx class asked for directly too, as the tests do
            got.append((prompt_driver(platforms.onyx) if platform is None else connect_handler(platform)).__name__)
        except Exception as exc:
            errors.append(repr(exc))
    threads = [threading.Thread(target=one, args=(p,)) for p in [Platform.EOS, Platform.ONYX, None] * 6]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(sorted(set(got)), len(got), errors)
""")


def test_many_threads_asking_for_drivers_at_once_all_get_one() -> None:
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", _RACE], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == "['ConnectHandler', 'OnyxSSH'] 18 []"


def test_onyx_gets_netmikos_mlnxos_driver_with_a_prompt_read_and_the_rest_the_dispatcher() -> None:
    from netmiko import ConnectHandler
    from netmiko.ssh_dispatcher import CLASS_MAPPER

    onyx = switch_drivers.connect_handler(Platform.ONYX)
    assert issubclass(onyx, CLASS_MAPPER["mellanox_mlnxos"]) and onyx is switch_drivers.connect_handler(Platform.ONYX)
    assert onyx.session_preparation is not CLASS_MAPPER["mellanox_mlnxos"].session_preparation
    for platform in (Platform.SONIC, Platform.CUMULUS, Platform.EOS, Platform.NXOS):
        assert switch_drivers.connect_handler(platform) is ConnectHandler


def test_the_onyx_login_read_waits_for_a_prompt_character_not_for_silence() -> None:
    calls = []

    class Probe(switch_drivers.connect_handler(Platform.ONYX)):
        def __init__(self) -> None:  # no connection: only the preparation's steps are recorded
            pass

        def _test_channel_read(self, count: int = 40, pattern: str = "") -> str:
            calls.append(("read", pattern))
            return ">"

        def set_base_prompt(self, *args, **kwargs) -> str:
            calls.append(("prompt",))
            return ""

        def set_terminal_width(self, *args, **kwargs) -> str:
            calls.append(("width",))
            return ""

        def disable_paging(self, *args, **kwargs) -> str:
            calls.append(("paging",))
            return ""

    Probe().session_preparation()
    # the prompt is taken last: disabling paging has read up to its own echo, past any banner
    assert calls == [("read", platforms.onyx.LOGIN_PROMPT_END), ("width",), ("paging",), ("prompt",)]
