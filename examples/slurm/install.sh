#!/bin/sh
# Install the rdmatool Slurm wiring, as root, from this folder (README.md here says when to run which step):
#
#   ./install.sh              on every machine with slurmd or slurmctld: the hooks, the settings and profiles, the
#                             log folder with its slurm.log
#   ./install.sh ssh-key      on the controller: the service user's state folder and the SSH key the prolog's gate
#                             logs in with (printed, to authorise on the nodes)
#   ./install.sh host-keys    on the controller, once the inventory is written and the key authorised: record every
#                             target's host key into the state folder's known_hosts (a first collection, as the
#                             service user), which the prolog's gate then verifies and never extends
#
# The prolog runs as SlurmUser (the service user) and writes LOGDIR; the health check runs as root and reads only its
# own node. Each folder is where slurm.env says; every one can be moved by the environment (the tests install into a
# temporary folder), and slurm.env is written with the folders chosen. Files a site edits (slurm.env, the profiles)
# are installed only when absent: a second run upgrades the scripts and keeps the settings.
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
SERVICE_USER=${SERVICE_USER:-slurm}                  # SlurmUser: the user PrologSlurmctld runs as
HOOK_DIR=${HOOK_DIR:-/etc/slurm/rdmatool}            # the scripts slurm.conf names (root's, 0755)
CONF_DIR=${CONF_DIR:-/etc/rdmatool}                  # slurm.env, the profiles, the inventory (root's, read by all)
STATE_DIR=${STATE_DIR:-/var/lib/rdmatool}            # the service user's alone (0700): its SSH key, known_hosts
LOG_DIR=${LOG_DIR:-/var/log/rdmatool}                # the service user's (0750): slurm.log, each gate's files
RDMATOOL=${RDMATOOL:-/opt/rdmatool/bin/rdmatool}     # the venv the README installs rdmatool into
INVENTORY=${INVENTORY:-$CONF_DIR/inventory.yaml}

fail() { echo "install.sh: $*" >&2; exit 2; }

[ "$(id -u)" = 0 ] || fail "run as root (it creates folders owned by root and by $SERVICE_USER)"
id -u "$SERVICE_USER" >/dev/null 2>&1 ||
    fail "no user $SERVICE_USER: set SERVICE_USER to the SlurmUser of slurm.conf"
GROUP=$(id -gn "$SERVICE_USER")

as_service_user() { runuser -u "$SERVICE_USER" -- "$@"; }

install_files() {
    install -d -m 0755 -o root -g root "$HOOK_DIR" "$CONF_DIR"
    install -m 0755 -o root -g root "$HERE/prolog-slurmctld.py" "$HERE/healthcheck.py" "$HOOK_DIR/"
    install -m 0644 -o root -g root "$HERE/rdmatool_slurm.py" "$HOOK_DIR/"
    for profile in gate-profile.yaml healthcheck-profile.yaml; do
        [ -e "$CONF_DIR/$profile" ] || install -m 0644 -o root -g root "$HERE/$profile" "$CONF_DIR/"
    done
    if [ ! -e "$CONF_DIR/slurm.env" ]; then
        # the shipped settings with the folders chosen here ('|' cannot be in them: checked below)
        sed -e "s|^RDMATOOL=.*|RDMATOOL=$RDMATOOL|" -e "s|/etc/rdmatool/|$CONF_DIR/|g" \
            -e "s|/var/lib/rdmatool/|$STATE_DIR/|g" -e "s|^LOGDIR=.*|LOGDIR=$LOG_DIR|" \
            "$HERE/slurm.env" >"$CONF_DIR/slurm.env.new"
        chmod 0644 "$CONF_DIR/slurm.env.new" && mv "$CONF_DIR/slurm.env.new" "$CONF_DIR/slurm.env"
    fi
    # The prolog (the service user) appends to slurm.log and writes each gate's files; the health check (root) too.
    # The log is made now, owned by the service user, so that whoever writes first cannot take it from the other.
    install -d -m 0750 -o "$SERVICE_USER" -g "$GROUP" "$LOG_DIR"
    [ -e "$LOG_DIR/slurm.log" ] || install -m 0640 -o "$SERVICE_USER" -g "$GROUP" /dev/null "$LOG_DIR/slurm.log"
    echo "installed: $HOOK_DIR (hooks), $CONF_DIR/slurm.env and the profiles, $LOG_DIR (owned by $SERVICE_USER)"
}

ssh_key() {
    # A system user's home is often absent (Debian's slurm: /nonexistent): its key lives in its state folder, which
    # the inventory names (`identity_file`).
    install -d -m 0700 -o "$SERVICE_USER" -g "$GROUP" "$STATE_DIR"
    if [ ! -e "$STATE_DIR/id_ed25519" ]; then
        as_service_user ssh-keygen -q -t ed25519 -N '' -C "rdmatool@$(hostname)" -f "$STATE_DIR/id_ed25519"
    fi
    echo "the prolog logs in with $STATE_DIR/id_ed25519: put 'identity_file: $STATE_DIR/id_ed25519' in the" \
         "inventory's defaults and authorise this key on every node (and switch) for the inventory's user:"
    cat "$STATE_DIR/id_ed25519.pub"
}

host_keys() {
    [ -d "$STATE_DIR" ] || fail "$STATE_DIR: absent; run ./install.sh ssh-key first"
    [ -r "$INVENTORY" ] || fail "$INVENTORY: no inventory to read the targets from"
    # As the service user, with its key: the keys are recorded where it may write and the prolog reads them, and a
    # key that is not authorised shows here, per host, rather than in the first job's prolog.
    status=0
    as_service_user "$RDMATOOL" collect -i "$INVENTORY" -o "$STATE_DIR/first-look" --interval 0 --force \
        --accept-new-host-keys --known-hosts "$STATE_DIR/known_hosts" || status=$?
    case $status in
    0) echo "host keys recorded in $STATE_DIR/known_hosts" ;;
    3) echo "host keys recorded in $STATE_DIR/known_hosts for the targets that answered; the others are" \
            "listed above: run ./install.sh host-keys again once they answer" >&2 ;;
    *) fail "rdmatool collect exited $status (the line above says why); nothing recorded" ;;
    esac
    return "$status"
}

for path in "$HOOK_DIR" "$CONF_DIR" "$STATE_DIR" "$LOG_DIR" "$RDMATOOL"; do
    case $path in /*) ;; *) fail "$path: give an absolute path" ;; esac
    case $path in *"|"* | *" "*) fail "$path: a path with '|' or a space cannot go into slurm.env" ;; esac
done

case "${1:-files}" in
files) install_files ;;
ssh-key) ssh_key ;;
host-keys) host_keys ;;
*) fail "unknown step '$1': files (the default), ssh-key or host-keys" ;;
esac
