"""known_hosts handling: markers, junk and malformed lines never stop the loading; @revoked keys and keys of a new type
for a known host are refused; a scan negotiates only the key types known for the host."""

from __future__ import annotations

import io
import socket
import threading
from pathlib import Path

import paramiko
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from rdmatool.transport import hostkeys
from rdmatool.transport.hostkeys import HostKeyChanged, HostKeyRevoked, HostKeyUnknown, KnownHosts


def _ed25519() -> paramiko.Ed25519Key:
    pem = ed25519.Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, serialization.NoEncryption())
    return paramiko.Ed25519Key(file_obj=io.StringIO(pem.decode()))


@pytest.fixture(scope="module")
def keys() -> dict[str, paramiko.PKey]:
    return {"ed": _ed25519(), "ed2": _ed25519(), "ec": paramiko.ECDSAKey.generate(), "rsa": paramiko.RSAKey.generate(1024)}


@pytest.fixture(autouse=True)
def _no_machine_files(tmp_path: Path, monkeypatch) -> None:
    """Only the file a test writes counts: not this machine's /etc/ssh or ~/.ssh."""
    monkeypatch.setattr(hostkeys, "SYSTEM_KNOWN_HOSTS", str(tmp_path / "absent-system"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


def _line(name: str, key: paramiko.PKey, marker: str = "") -> str:
    return f"{marker + ' ' if marker else ''}{name} {key.get_name()} {key.get_base64()}"


def test_markers_junk_and_malformed_lines_are_skipped(tmp_path: Path, keys) -> None:
    hashed = paramiko.HostKeys.hash_host("h4")
    text = "\n".join([
        _line("*.example", keys["ed"], "@cert-authority"),
        _line("h1", keys["ec"]),
        "h2 ssh-ed25519 !!!not-base64!!!",
        "h3 ssh-ed25519",
        "h3b ssh-ed25519 " + keys["ec"].get_base64(),  # a blob of another type than the line says
        "h3c ssh-unknown AAAA",
        _line(hashed, keys["ed"]),
        "|1|bad-salt|bad " + keys["ed"].get_name() + " " + keys["ed"].get_base64(),
        "|1|" + "A" * 8 + "|" + "B" * 8 + " " + keys["ed"].get_name() + " " + keys["ed"].get_base64(),
        _line("h5,h6,!h7", keys["rsa"]),
        "@weird h8 " + keys["ed"].get_name() + " " + keys["ed"].get_base64(),
        "# a comment",
        "",
    ]).encode() + b"\n\xff\xfe\x00\x01binary\n" + b"x" * 200_000 + b"\n" + _line("h9", keys["ed"]).encode()
    path = tmp_path / "known_hosts"
    path.write_bytes(text)
    known = KnownHosts(path)
    assert set(known.lookup("h1")) == {"ecdsa-sha2-nistp256"}
    assert set(known.lookup("h4")) == {"ssh-ed25519"}
    assert set(known.lookup("h5")) == set(known.lookup("h6")) == {"ssh-rsa"}
    assert set(known.lookup("h9")) == {"ssh-ed25519"}  # after binary junk and an overlong line
    for nobody in ("h2", "h3", "h3b", "h3c", "h7", "h8", "*.example", "!h7"):
        assert known.lookup(nobody) == {}, nobody
    known.check("h1", 22, keys["ec"])
    known.check("h4", 22, keys["ed"])


def test_paramikos_own_loader_would_have_stopped_here(tmp_path: Path) -> None:
    path = tmp_path / "known_hosts"
    path.write_text("h2 ssh-ed25519 !!!not-base64!!!\n")
    with pytest.raises(Exception):  # noqa: B017 - whatever paramiko raises; ours must not
        paramiko.HostKeys(str(path))
    assert KnownHosts(path).lookup("h2") == {}


def test_a_revoked_key_is_refused_for_every_host(tmp_path: Path, keys) -> None:
    path = tmp_path / "known_hosts"
    path.write_text("\n".join([_line("*", keys["rsa"], "@revoked"), _line("h1", keys["rsa"])]) + "\n")
    for accept_new in (False, True):
        known = KnownHosts(path, accept_new=accept_new, accept_new_key_types=accept_new)
        for host in ("h1", "elsewhere"):
            with pytest.raises(HostKeyRevoked, match="@revoked"):
                known.check(host, 22, keys["rsa"])
    assert issubclass(HostKeyRevoked, HostKeyChanged)  # transports that know only "changed" still refuse
    assert path.read_text().count("\n") == 2  # nothing recorded


def test_a_new_key_type_for_a_known_host_is_a_changed_key(tmp_path: Path, keys) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(_line("[10.0.0.1]:2222", keys["ec"]) + "\n")
    for accept_new in (False, True):
        with pytest.raises(HostKeyChanged, match="--accept-new-key-types"):
            KnownHosts(path, accept_new=accept_new).check("10.0.0.1", 2222, keys["ed"])
    with pytest.raises(HostKeyChanged):  # the new-types option alone does not accept anything
        KnownHosts(path, accept_new_key_types=True).check("10.0.0.1", 2222, keys["ed"])
    assert path.read_text().count("\n") == 1
    KnownHosts(path, accept_new=True, accept_new_key_types=True).check("10.0.0.1", 2222, keys["ed"])
    again = KnownHosts(path)
    assert set(again.lookup("[10.0.0.1]:2222")) == {"ecdsa-sha2-nistp256", "ssh-ed25519"}
    again.check("10.0.0.1", 2222, keys["ed"])
    with pytest.raises(HostKeyChanged, match="host key changed"):
        again.check("10.0.0.1", 2222, keys["ed2"])


def test_unknown_hosts_and_same_type_changes_keep_their_meaning(tmp_path: Path, keys) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(_line("h1", keys["ed"]) + "\n")
    with pytest.raises(HostKeyUnknown, match="--accept-new-host-keys"):
        KnownHosts(path).check("h2", 22, keys["ed"])
    with pytest.raises(HostKeyChanged, match="host key changed"):
        KnownHosts(path, accept_new=True, accept_new_key_types=True).check("h1", 22, keys["ed2"])
    KnownHosts(path, accept_new=True).check("h2", 22, keys["ed2"])
    KnownHosts(path).check("h2", 22, keys["ed2"])


def test_a_recorded_key_never_joins_an_unterminated_last_line(tmp_path: Path, keys) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(_line("h1", keys["ed"]))  # no newline at the end, as a hand edit may leave it
    KnownHosts(path, accept_new=True).check("h2", 22, keys["ec"])
    known = KnownHosts(path)
    assert set(known.lookup("h1")) == {"ssh-ed25519"} and set(known.lookup("h2")) == {"ecdsa-sha2-nistp256"}


def test_disabled_algorithms_leave_only_the_known_types(tmp_path: Path, keys) -> None:
    path = tmp_path / "known_hosts"
    path.write_text("\n".join([_line("ec", keys["ec"]), _line("rsa", keys["rsa"])]) + "\n")
    known = KnownHosts(path)
    assert "ecdsa-sha2-nistp256" not in known.disabled_key_algorithms("ec", 22)
    assert "ssh-ed25519" in known.disabled_key_algorithms("ec", 22)
    rsa = known.disabled_key_algorithms("rsa", 22)
    assert "rsa-sha2-512" not in rsa and "rsa-sha2-256" not in rsa and "ssh-ed25519" in rsa
    assert known.disabled_key_algorithms("nobody", 22) == []
    assert KnownHosts(path, accept_new=True, accept_new_key_types=True).disabled_key_algorithms("ec", 22) == []


def _serve(sock: socket.socket, host_keys: list[paramiko.PKey]) -> threading.Thread:
    def run() -> None:
        transport = paramiko.Transport(sock)
        for key in host_keys:
            transport.add_server_key(key)
        try:
            transport.start_server(server=paramiko.ServerInterface())
            transport.join(5)
        except (paramiko.SSHException, EOFError, OSError):
            pass
        finally:
            transport.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize(
    ("offered", "known_as", "outcome"),
    [
        (["ed", "ec"], "ec", None),  # paramiko would prefer ed25519; only ecdsa is negotiated, and it matches
        (["ed"], "ec", "offers none of the host key types"),  # the host no longer offers the known type
        (["ed"], "ed", None),
        (["ed2"], "ed", "host key changed"),
    ],
)
def test_scan_negotiates_the_known_key_types(tmp_path: Path, keys, offered: list[str], known_as: str,
                                              outcome: str | None) -> None:
    path = tmp_path / "known_hosts"
    path.write_text(_line("[sw1]:2022", keys[known_as]) + "\n")
    known = KnownHosts(path)
    client, server = socket.socketpair()
    thread = _serve(server, [keys[k] for k in offered])
    try:
        if outcome is None:
            assert hostkeys.scan_and_check(known, "sw1", 2022, timeout=10, sock=client) == keys[known_as]
        else:
            with pytest.raises(HostKeyChanged, match=outcome):
                hostkeys.scan_and_check(known, "sw1", 2022, timeout=10, sock=client)
    finally:
        client.close()
        thread.join(10)
