#!/usr/bin/env bash
# Set up a machine for ovn-frr development and tests (Debian 12 or 13, as root).
#   - system packages: FRR, OVN, Open vSwitch, iproute2, ping (apt, skipped when present)
#   - a virtualenv in .venv with ovn-frr (editable) and its test dependencies
# Idempotent: a second run checks and returns in seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# python3-openvswitch: the ovs library with its C JSON extension (ovs._json), which PyPI's
# ovs lacks unless built against OVS headers (Debian ships none). Measured on 110k static
# routes: select 12.8 s -> 4.1 s, a fresh IDL sync 54 s -> 29 s. The venv is therefore made
# from Debian's python3 with system site-packages, so that it imports this ovs.
# user-mode-linux, gcc, libc6-dev: the kernel tier (tests/kernel) boots a User-Mode Linux guest,
# whose kernel has the vrf and dummy devices this machine's lacks (ovn_frr.lab.uml).
# bird2: a ToR that is not FRR in the lab (PeerSpec(daemon="bird")).
APT_PACKAGES=(frr frr-pythontools ovn-central ovn-host openvswitch-switch iproute2 iputils-ping
              python3-openvswitch python3-venv user-mode-linux gcc libc6-dev bird2)
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
    for svc in frr ovn-central ovn-host openvswitch-switch bird; do
        systemctl disable --now "$svc" >/dev/null 2>&1 || true
    done
else
    log "system packages present"
fi

PY=/usr/bin/python3
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
    log "Debian's python3 is older than 3.11"; exit 1; }

stamp="$VENV/.ovn-frr-setup"
want=$( (cat pyproject.toml; echo "$PY"; "$PY" --version) | sha256sum | cut -d' ' -f1)
if [ -x "$VENV/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    log "virtualenv $VENV up to date"
else
    log "creating virtualenv $VENV with $PY (system site-packages, for ovs._json)"
    rm -rf "$VENV"
    "$PY" -m venv --system-site-packages "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -e ".[test]"
    echo "$want" > "$stamp"
fi
"$VENV/bin/python" -c 'import ovs._json' || { log "ovs C extension missing"; exit 1; }
"$VENV/bin/ovn-frr" versions
