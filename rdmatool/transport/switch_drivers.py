"""Which netmiko driver class reaches a switch platform: netmiko's own, with its login wait shortened where the
platform's module gives the characters its prompt ends with (LOGIN_PROMPT_END: Onyx).

netmiko's MLNX-OS driver prepares a session with its base class's unpatterned channel read: it sleeps a second, then
reads until the channel has been silent for two seconds — about 2.5 s of every Onyx login spent waiting after the
prompt has long arrived (profiled against the simulated fabric: 2.2 s of a 2.6 s connect in `read_channel_timing`).
Its Cisco-style siblings read until the prompt's last character instead; `prompt_driver` does the same and is
otherwise netmiko's driver unchanged (the same prompt, paging and enable handling), but takes the prompt after
disabling paging, as netmiko's IOS driver does, so that a login banner holding `#` is never taken for it. Every
other platform gets netmiko's dispatcher, by the device type its module's NETMIKO_DEVICE_TYPE names.
"""

from __future__ import annotations

import threading

from rdmatool import platforms
from rdmatool.model import Platform


def connect_handler(platform: Platform):
    """A callable taking netmiko's connection keywords (device_type included) and returning a live connection."""
    # netmiko as a whole, always first and by its package: many collecting threads import it at once, and a thread
    # importing one of its driver modules directly meets the package half-initialised by another (its package
    # imports every driver).
    from netmiko import ConnectHandler

    module = platforms.switch(platform)
    if module is not None and module.LOGIN_PROMPT_END:
        return prompt_driver(module)
    return ConnectHandler


def prompt_driver(module):
    """netmiko's driver of the platform whose login read stops at the prompt (made on first use: netmiko is
    imported only when a switch is collected), named after the platform (`OnyxSSH`)."""
    with _MADE:
        if module.NAME not in _DRIVERS:
            _DRIVERS[module.NAME] = _prompt_class(module.NETMIKO_DEVICE_TYPE, module.LOGIN_PROMPT_END, module.TITLE)
    return _DRIVERS[module.NAME]


def _prompt_class(device_type: str, prompt_end: str, title: str):
    # `import netmiko` waits for the package to finish importing in another thread; `from netmiko.x import` alone
    # would not (a parent package found half-initialised is used as it is)
    import netmiko  # noqa: F401
    from netmiko.ssh_dispatcher import CLASS_MAPPER

    class PromptSSH(CLASS_MAPPER[device_type]):
        def session_preparation(self) -> None:
            # The first read stops at the first prompt character, which may be inside the login banner (a box of
            # `#`); disabling paging next reads until the CLI echoes that command, i.e. past the whole banner, and
            # only then is the prompt taken (the order of netmiko's Cisco IOS driver, which reads the same way).
            # Taken first, a banner still arriving under load gave a prompt of `##`.
            self._test_channel_read(pattern=prompt_end)
            self.set_terminal_width()
            self.disable_paging()
            self.set_base_prompt()

    PromptSSH.__name__ = PromptSSH.__qualname__ = f"{title}SSH"
    return PromptSSH


_DRIVERS: dict = {}
_MADE = threading.Lock()
