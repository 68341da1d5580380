"""Replay one generated fabric: `python -m tests.generated SEED [FAULT]` prints it and its loud findings."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from tests.generated.generate import generate
from tests.generated.judge import FAULTS, diagnose, fault_problems, faulted, healthy_problems


def main(argv: list[str]) -> int:
    seed, fault = int(argv[0]), (argv[1] if len(argv) > 1 else None)
    where = Path(tempfile.mkdtemp(prefix="generated-"))
    if fault is None:
        fabric = generate(seed)
        problems = healthy_problems(diagnose(fabric, where))
    else:
        fabric, injected = faulted(FAULTS[fault], seed)
        print(f"{fault} on {injected[0]}")
        problems = fault_problems(diagnose(fabric, where), injected)
    print(fabric.describe(), f"(bundle in {where})")
    print(problems or "as expected")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
