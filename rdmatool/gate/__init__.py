"""The pre-training fabric health gate: profile (policy), policy (pure decisions), run (orchestration)."""
