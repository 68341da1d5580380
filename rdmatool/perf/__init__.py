"""perftest orchestration: schedules, running pairs over SSH, attribution (bad node vs bad link), outputs.

    schedule    all_pairs / ring / gate_rounds / confirmation_round: rounds of disjoint (server, client) pairs
    model       PerfOptions, PairResult, Attribution, HostInfo (what discovery found on a host)
    discovery   the RDMA device, port, RoCE v2 GID index and fabric address of a host, from its own sysfs
    remote      one audited command with a timeout, and background perftest commands that are always cleaned up
    engine      run_schedule / run_gate_perf
    modes       `perf run`'s pair modes in an open session (measure) and the run's files (write_run)
    attribution attribute(): which nodes and which links are bad, with the evidence
    output      write_results(): matrix CSVs, heatmap PNG, attribution JSON
"""
