"""rdmatool: RDMA fabric tuning and diagnostics for InfiniBand and RoCEv2 GPU clusters."""

__version__ = "0.1.0"
