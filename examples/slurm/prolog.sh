#!/bin/bash
# Slurm prolog (slurm.conf: Prolog=/etc/slurm/prolog.d/rdmatool-gate.sh, PrologFlags=Alloc on the first node only
# via `[ "$SLURMD_NODENAME" = "$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)" ] || exit 0`).
# Gates the job's nodes on fabric health before the job starts. A failing gate drains exactly the nodes rdmatool
# names and fails the prolog, so Slurm requeues the job onto healthy nodes; an inconclusive gate only logs, so a
# monitoring gap never blocks the whole cluster (flip GATE_STRICT=1 to fail closed there too).
set -u
INVENTORY=${RDMATOOL_INVENTORY:-/etc/rdmatool/inventory.yaml}
PROFILE=${RDMATOOL_PROFILE:-/etc/rdmatool/gate-profile.yaml}
BUDGET=${RDMATOOL_BUDGET:-120}
GATE_STRICT=${GATE_STRICT:-0}
# Site options for the gate, e.g. "--known-hosts /etc/rdmatool/known_hosts --forks 128" (word-split on purpose).
GATE_ARGS=${RDMATOOL_GATE_ARGS:-}
LOGDIR=${RDMATOOL_LOGDIR:-/var/log/rdmatool}
mkdir -p "$LOGDIR"

first_node=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1)
[ "${SLURMD_NODENAME:-$first_node}" = "$first_node" ] || exit 0

# The job's nodes as one comma-separated --limit (hostnames only: scontrol expands the Slurm hostlist).
nodes=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | paste -sd, -)
drain="$LOGDIR/drain.$SLURM_JOB_ID"
# shellcheck disable=SC2086
rdmatool gate -i "$INVENTORY" --limit "$nodes" --profile "$PROFILE" --budget "$BUDGET" $GATE_ARGS \
    --drain-file "$drain" --junit "$LOGDIR/gate.$SLURM_JOB_ID.xml" >"$LOGDIR/gate.$SLURM_JOB_ID.log" 2>&1
status=$?

case $status in
0) exit 0 ;;
1)
    while read -r node; do
        [ -n "$node" ] && scontrol update NodeName="$node" State=DRAIN Reason="rdmatool gate job $SLURM_JOB_ID"
    done <"$drain"
    exit 1 ;;
3) [ "$GATE_STRICT" = 1 ] && exit 1; exit 0 ;;
*) exit 0 ;;  # a usage error in the gate itself must not take the cluster down; the log says what happened
esac
