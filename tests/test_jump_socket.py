"""A bastion channel's sends and its close keep one order (rdmatool.transport.jump.JumpSocket).

paramiko builds a channel's data message under a lock and transmits it after releasing it; a close racing with a
send could put data after CLOSE on the bastion's connection, which OpenSSH answers by dropping the connection and
with it every host behind the bastion. The fake channel here stands for paramiko's: it records what reaches the
wire, and its send takes time between the check and the transmission, as paramiko's does.
"""

from __future__ import annotations

import threading
import time

import pytest

from rdmatool.transport.jump import JumpSocket


class SlowChannel:
    """Records ("send", data) and ("close",) in the order they reach the wire; a send spends `delay` first."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.wire: list[tuple] = []
        self.in_send = threading.Event()
        self.timeout = None

    def send(self, data: bytes) -> int:
        self.in_send.set()
        time.sleep(self.delay)
        self.wire.append(("send", bytes(data)))
        return len(data)

    def close(self) -> None:
        self.wire.append(("close",))

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout


def test_a_close_during_a_send_reaches_the_wire_after_it() -> None:
    channel = SlowChannel(delay=0.2)
    sock = JumpSocket(channel)
    sender = threading.Thread(target=sock.send, args=(b"last packet",))
    sender.start()
    assert channel.in_send.wait(5)
    sock.close()  # while the send is between its check and its transmission
    sender.join(5)
    assert channel.wire == [("send", b"last packet"), ("close",)]


def test_a_send_after_the_close_fails_as_on_a_closed_socket_and_reaches_nothing() -> None:
    channel = SlowChannel()
    sock = JumpSocket(channel)
    sock.close()
    with pytest.raises(OSError, match="closed"):
        sock.send(b"late")
    with pytest.raises(OSError, match="closed"):
        sock.sendall(b"late")
    assert channel.wire == [("close",)]
    assert sock._closed  # what paramiko's Transport.stop_thread looks at


def test_sendall_sends_everything_and_the_rest_is_the_channels() -> None:
    class Short(SlowChannel):
        def send(self, data: bytes) -> int:  # a window that takes 3 bytes at a time
            return super().send(data[:3])

    channel = Short()
    sock = JumpSocket(channel)
    sock.sendall(b"abcdefgh")
    assert b"".join(d for _, d in channel.wire) == b"abcdefgh"
    sock.settimeout(1.0)
    assert channel.timeout == 1.0
