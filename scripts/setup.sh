#!/usr/bin/env bash
# Set up a machine for ovn-frr development and tests (Debian 12 or 13, as root).
#   - system packages: FRR, OVN, Open vSwitch, iproute2 (apt, skipped when already present)
#   - a virtualenv in .venv with ovn-frr (editable) and its test dependencies
# Idempotent: a second run checks and returns in seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

APT_PACKAGES=(frr frr-pythontools ovn-central ovn-host openvswitch-switch iproute2)
VENV=${OVN_FRR_VENV:-$here/.venv}

log() { printf 'setup: %s\n' "$*"; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        log "missing packages ${missing[*]}; run this script as root to install them" >&2
        exit 1
    fi
    log "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q
    apt-get install -y -q --no-install-recommends "${missing[@]}"
    # The packages enable system services; the lab runs its own daemons in namespaces, so make
    # sure no system-wide FRR/OVN instance holds ports or sockets (no-op where systemd is absent).
    for svc in frr ovn-central ovn-host openvswitch-switch; do
        systemctl disable --now "$svc" >/dev/null 2>&1 || true
    done
else
    log "system packages present"
fi

# Python >= 3.11 with a working venv module: the PATH python3 first, then Debian's.
pick_python() {
    for py in ${PYTHON:-} python3 /usr/bin/python3; do
        [ -n "$py" ] || continue
        command -v "$py" >/dev/null 2>&1 || continue
        "$py" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || continue
        echo "$py"; return 0
    done
    return 1
}
if ! py=$(pick_python); then
    log "no python >= 3.11 with venv; installing python3-venv"
    apt-get install -y -q python3-venv >/dev/null
    py=$(pick_python)
fi

stamp="$VENV/.ovn-frr-setup"
want=$(cat pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "virtualenv $VENV up to date"
else
    log "creating virtualenv $VENV with $py"
    "$py" -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -e ".[test]"
    echo "$want" > "$stamp"
fi
"$VENV/bin/ovn-frr" versions
