#!/bin/bash
# Slurm HealthCheckProgram (slurm.conf: HealthCheckProgram=/etc/slurm/rdmatool-healthcheck.sh,
# HealthCheckInterval=300, HealthCheckNodeState=IDLE). Runs on each node for that node alone: state and counters
# only (no perftest: a health check must be cheap and must not need a partner). Drains the node on failure.
set -u
INVENTORY=${RDMATOOL_INVENTORY:-/etc/rdmatool/inventory.yaml}
PROFILE=${RDMATOOL_HEALTHCHECK_PROFILE:-/etc/rdmatool/healthcheck-profile.yaml}   # bandwidth: {enabled: false}
node=$(hostname -s)
rdmatool gate -i "$INVENTORY" --limit "$node" --profile "$PROFILE" --budget 60 --json >/tmp/rdmatool-health.json 2>&1
if [ $? -eq 1 ]; then
    reason=$(python3 -c 'import json,sys; f=json.load(open("/tmp/rdmatool-health.json"))["findings"]; print((f[0]["rule"] if f else "fabric")[:60])' 2>/dev/null || echo fabric)
    scontrol update NodeName="$node" State=DRAIN Reason="rdmatool: $reason"
fi
exit 0
