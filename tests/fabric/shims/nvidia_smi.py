"""nvidia-smi shim: `--query-gpu=<fields> --format=csv[,noheader][,nounits]` and `-L`, from the host's `gpu` spec.

The scenario gives each GPU host `gpu: {count, util, memory_pct}` (tests/fabric/scenario.py: `gpus`, `gpu_util`,
`gpu_memory_pct`); a host without GPUs has no nvidia-smi on its PATH at all. Read-only, like the real tool's query
mode; any other argument list is refused as the real tool refuses an unknown option.
"""

from __future__ import annotations

from tests.fabric.shims._base import Ctx, err

MODEL = "NVIDIA H100 80GB HBM3"
TOTAL_MIB = 81559


def _values(ctx: Ctx, index: int) -> dict[str, str]:
    gpu = ctx.spec["gpu"]
    # the utilisation wobbles by a point between reads, as a real training step does, around the scenario's mean
    util = min(100.0, max(0.0, gpu["util"] + (1 if int(ctx.now) % 2 else -1) * (index % 2)))
    used = round(TOTAL_MIB * gpu["memory_pct"] / 100)
    return {
        "index": str(index), "uuid": f"GPU-{index:08x}-{sum(map(ord, ctx.spec['name'])) % 65536:04x}-4000-8000-{index:012x}",
        "name": MODEL, "utilization.gpu": f"{util:g}", "utilization.memory": f"{min(100.0, util * 0.4):.0f}",
        "memory.used": str(used), "memory.total": str(TOTAL_MIB), "memory.free": str(TOTAL_MIB - used),
        "pcie.link.gen.current": "5" if util > 0 else "1", "pcie.link.gen.max": "5",
        "pcie.link.width.current": "16", "pcie.link.width.max": "16", "temperature.gpu": "61",
    }


def main(ctx: Ctx, argv: list[str]) -> int:
    gpu = ctx.spec.get("gpu")
    if not gpu or not gpu.get("count"):
        print("No devices were found")
        return 6
    if argv == ["-L"]:
        for i in range(gpu["count"]):
            print(f"GPU {i}: {MODEL} (UUID: {_values(ctx, i)['uuid']})")
        return 0
    query = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")), None)
    form = next((a.split("=", 1)[1] for a in argv if a.startswith("--format=")), None)
    if query is None or form is None or len(argv) != 2:
        return err("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.", 2)
    options = form.split(",")
    if options[0] != "csv" or not set(options[1:]) <= {"noheader", "nounits"}:
        return err(f'"{form}" is not a valid format.', 2)
    fields = query.split(",")
    known = _values(ctx, 0)
    bad = [f for f in fields if f not in known]
    if bad:
        return err(f'Field "{bad[0]}" is not a valid field to query.', 2)
    units = {"utilization.gpu": " %", "utilization.memory": " %", "memory.used": " MiB", "memory.total": " MiB",
             "memory.free": " MiB"}
    if "noheader" not in options:
        print(", ".join(f"{f} [{units[f].strip()}]" if f in units and "nounits" not in options else f
                        for f in fields))
    for i in range(gpu["count"]):
        values = _values(ctx, i)
        print(", ".join(values[f] + ("" if "nounits" in options else units.get(f, "")) for f in fields))
    return 0
