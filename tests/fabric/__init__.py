"""Simulated RDMA fabric served by a real OpenSSH server on loopback (see tests/fabric/README.md)."""
