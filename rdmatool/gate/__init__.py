"""The pre-training fabric health gate: profile (policy), policy (pure decisions), judge (the perftest attribution
judged by the playbooks' verdict rules), run (orchestration, live and replayed)."""
