#!/usr/bin/env bash
# Run a command inside a Debian 13 (trixie) root built from Debian's apt: FRR 10.3, OVN 25.03,
# OVS 3.5, Python 3.13, on this machine's kernel (as root). The root is built once with
# mmdebstrap and cached (keyed by its package list); this tree is bind-mounted at /src and a
# virtualenv of ovn-frr lives in the root at /opt/ovn-frr-venv (its dependencies cached too).
#
#   scripts/deb13.sh [COMMAND...]   default: every test tier (pytest tests)
#   OVN_FRR_DEB13_CACHE=DIR         where the root is kept (default /var/cache/ovn-frr)
#
# The chroot gets: the root bound onto itself (`ip netns exec` remounts /), /proc, /sys and /dev
# (rbind), a tmpfs /run with the host's /run/netns bound in (namespaces are shared with the host:
# lab names are unique per run), the root of scripts/frr-root.sh at its own path, and the host's
# resolv.conf, pip config and CA certificates (pip reaches PyPI as the host does). Everything
# is unmounted on exit.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
PACKAGES=(frr frr-pythontools ovn-central ovn-host openvswitch-switch iproute2 procps
          iputils-ping python3 python3-openvswitch python3-venv ca-certificates
          user-mode-linux gcc libc6-dev)
SUITE=trixie
cache=${OVN_FRR_DEB13_CACHE:-/var/cache/ovn-frr}
key=$(printf '%s\n' "$SUITE" "${PACKAGES[@]}" | sha256sum | cut -c1-12)
root=$cache/$SUITE-$key
VENV=/opt/ovn-frr-venv

log() { printf 'deb13: %s\n' "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then log "needs root (chroot, mounts)"; exit 1; fi

if [ ! -f "$root/.complete" ]; then
    command -v mmdebstrap >/dev/null || {
        log "installing mmdebstrap"; apt-get update -q; apt-get install -y -q mmdebstrap; }
    log "building the $SUITE root in $root (once)"
    rm -rf "$root"
    mkdir -p "$cache"
    inc=$(IFS=,; echo "${PACKAGES[*]}")
    mmdebstrap --quiet --variant=apt --include="$inc" \
        --customize-hook='chroot "$1" sh -c "systemctl mask frr ovn-central ovn-host openvswitch-switch >/dev/null 2>&1 || true"' \
        "$SUITE" "$root"
    touch "$root/.complete"
fi

mounts=()
mnt() { mount "$@"; mounts=("${@: -1}" "${mounts[@]}"); }
cleanup() {
    for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null || true; done
}
trap cleanup EXIT

mnt --bind "$root" "$root"
mnt -t proc proc "$root/proc"
mnt --rbind /sys "$root/sys"; mount --make-rslave "$root/sys"
mnt --rbind /dev "$root/dev"; mount --make-rslave "$root/dev"
mnt -t tmpfs tmpfs "$root/run"
mkdir -p /run/netns "$root/run/netns" "$root/src"
# namespaces made inside appear outside too (and the reverse): /run/netns a shared mount
if ! mount --make-shared /run/netns 2>/dev/null; then
    mount --bind /run/netns /run/netns
    mount --make-shared /run/netns
fi
mnt --bind /run/netns "$root/run/netns"
mnt --bind "$here" "$root/src"
# the root with a newer FRR that the EVPN tests' route reflector runs (scripts/frr-root.sh):
# built here (mmdebstrap is not in the root) and seen inside at the same path
helper=$(OVN_FRR_DEB13_CACHE=$cache bash "$here/scripts/frr-root.sh")
mkdir -p "$root$helper"
mnt --bind "$helper" "$root$helper"
for f in /etc/resolv.conf /etc/pip.conf /etc/ssl/certs/ca-certificates.crt; do
    [ -f "$f" ] && cp -L "$f" "$root$f"
done

# the virtualenv: Debian's python3 with system site-packages (ovs._json), ovn-frr editable
want=$( (cat "$here/pyproject.toml"; chroot "$root" python3 --version) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$root$VENV/.ovn-frr-setup" 2>/dev/null)" != "$want" ]; then
    log "creating $VENV in the root"
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        sh -ec "rm -rf $VENV; python3 -m venv --system-site-packages $VENV
        $VENV/bin/pip install -q --disable-pip-version-check -e '/src[test]'"
    echo "$want" > "$root$VENV/.ovn-frr-setup"
fi

if [ $# -eq 0 ]; then
    set -- "$VENV/bin/python" -m pytest -q -p no:cacheprovider tests
fi
log "running in $SUITE: $*"
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 OVN_FRR_STACK=debian-13 \
    OVN_FRR_DEB13_CACHE="$cache" \
    sh -c 'cd /src && "$@"' sh "$@"
