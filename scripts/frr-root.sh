#!/usr/bin/env bash
# Print the path of a root file system with the FRR of another Debian suite (default: forky,
# FRR 10.7), built once with mmdebstrap and cached (keyed by suite and package list). The lab
# runs a peer's FRR from it (PeerSpec.frr_root), in the peer's namespace: only FRR comes from
# it, ovn-frr and OVN stay this machine's. The EVPN e2e tests use it for a route reflector
# that is an EVPN graceful-restart helper (FRR >= 10.6; Debian 12 and 13 have 8.4 and 10.3).
#
#   scripts/frr-root.sh [SUITE]
#   OVN_FRR_DEB13_CACHE=DIR   where roots are kept (default /var/cache/ovn-frr, as deb13.sh)
#
# Debian's mirror may serve a testing suite whose Release file has expired (a frozen copy):
# apt's Check-Valid-Until is turned off for this build only; signatures are still checked.
set -euo pipefail

SUITE=${1:-forky}
PACKAGES=(frr)
cache=${OVN_FRR_DEB13_CACHE:-/var/cache/ovn-frr}
key=$(printf '%s\n' "$SUITE" "${PACKAGES[@]}" | sha256sum | cut -c1-12)
root=$cache/frr-$SUITE-$key

log() { printf 'frr-root: %s\n' "$*" >&2; }

if [ ! -f "$root/.complete" ]; then
    if [ "$(id -u)" -ne 0 ]; then log "needs root to build $root"; exit 1; fi
    mkdir -p "$cache"
    # one build at a time (two test tiers may ask at once); the second finds it made
    exec 9>"$cache/.frr-root.lock"
    flock 9
fi
if [ ! -f "$root/.complete" ]; then
    command -v mmdebstrap >/dev/null || {
        log "installing mmdebstrap"; apt-get update -q >&2; apt-get install -y -q mmdebstrap >&2; }
    log "building the $SUITE FRR root in $root (once)"
    rm -rf "$root"
    inc=$(IFS=,; echo "${PACKAGES[*]}")
    mmdebstrap --quiet --variant=apt --include="$inc" \
        --aptopt='Acquire::Check-Valid-Until "false"' \
        --customize-hook='chroot "$1" sh -c "systemctl mask frr >/dev/null 2>&1 || true"' \
        "$SUITE" "$root" "deb http://deb.debian.org/debian $SUITE main" >&2
    # a testing suite moves: which FRR this root has is said once, when it is made
    log "FRR $(chroot "$root" dpkg-query -W -f='${Version}' frr) in $root"
    touch "$root/.complete"
fi
echo "$root"
