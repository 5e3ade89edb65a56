#!/usr/bin/env bash
# Run a command inside a Debian root built from Debian's apt, on this machine's kernel (as root):
#   trixie (Debian 13): FRR 10.3, OVN 25.03, OVS 3.5, Python 3.13
#   sid:                FRR 10.7, OVN 26.03, OVS 4.0, Python 3.14 (the suite moves: the
#                       versions are printed when the root is made, and detected by the tests)
# The root is built once with mmdebstrap and cached (keyed by suite and package list); this tree
# is bind-mounted at /src and a virtualenv of ovn-frr lives in the root at /opt/ovn-frr-venv.
#
#   scripts/root.sh SUITE [COMMAND...]   default command: every test tier (pytest tests)
#   scripts/root.sh SUITE --path         build the root if needed and print its path (the
#                                        tests run binaries of the sid root: OVN 26.03's northd)
#   OVN_FRR_DEB13_CACHE=DIR              where roots are kept (default /var/cache/ovn-frr)
#
# Everything the root needs is mounted in a mount namespace of its own (`unshare -m`, every
# mount a slave of the host's): /proc, /sys and /dev, a tmpfs /run (with a /run/netns of its
# own), the tree at /src, the root of scripts/frr-root.sh and (for trixie) the sid root at their
# own paths. Nothing mounted for
# the root, nor any network namespace made inside it, is ever seen by the host, and nothing
# done inside (an unmount included) can propagate to the host: a bind of the host's shared
# /run/netns, unmounted at exit, used to unmount on the host every namespace made meanwhile
# (FIELD-NOTES, "Mount propagation"). The mounts go with the namespace.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
SUITE=${1:?usage: scripts/root.sh SUITE [COMMAND...]}
shift
PACKAGES=(frr frr-pythontools ovn-central ovn-host openvswitch-switch iproute2 procps
          iputils-ping python3 python3-openvswitch python3-venv ca-certificates
          user-mode-linux gcc libc6-dev bird2)
case $SUITE in
    trixie) STACK=debian-13; APTOPT=() ;;
    # sid's Release file may have expired on a frozen mirror: signatures are still checked;
    # `mount` (util-linux) is no longer pulled in by the others there (the lab's FRR wrapper
    # and the User-Mode Linux guest's init use it)
    sid) STACK=debian-sid; APTOPT=(--aptopt='Acquire::Check-Valid-Until "false"')
         PACKAGES+=(mount) ;;
    *) printf 'root: unknown suite %s (trixie, sid)\n' "$SUITE" >&2; exit 2 ;;
esac
cache=${OVN_FRR_DEB13_CACHE:-/var/cache/ovn-frr}
key=$(printf '%s\n' "$SUITE" "${PACKAGES[@]}" | sha256sum | cut -c1-12)
root=$cache/$SUITE-$key
VENV=/opt/ovn-frr-venv

log() { printf 'root(%s): %s\n' "$SUITE" "$*" >&2; }

if [ "$(id -u)" -ne 0 ]; then log "needs root (chroot, mounts)"; exit 1; fi

if [ -z "${OVN_FRR_ROOT_NS:-}" ]; then
    if [ ! -f "$root/.complete" ]; then
        mkdir -p "$cache"
        exec 9>"$cache/.$SUITE.lock"  # one build at a time: the second finds it made
        flock 9
    fi
    if [ ! -f "$root/.complete" ]; then
        command -v mmdebstrap >/dev/null || {
            log "installing mmdebstrap"; apt-get update -q; apt-get install -y -q mmdebstrap; }
        log "building the $SUITE root in $root (once)"
        rm -rf "$root"
        inc=$(IFS=,; echo "${PACKAGES[*]}")
        mmdebstrap --quiet --variant=apt --include="$inc" "${APTOPT[@]}" \
            --customize-hook='chroot "$1" sh -c "systemctl mask frr ovn-central ovn-host openvswitch-switch bird >/dev/null 2>&1 || true"' \
            "$SUITE" "$root" "deb http://deb.debian.org/debian $SUITE main"
        log "$(chroot "$root" dpkg-query -W -f='${Package} ${Version}, ' frr ovn-central \
            openvswitch-switch python3)in $root"
        touch "$root/.complete"
    fi
    exec 9>&-
    if [ "${1:-}" = --path ]; then echo "$root"; exit 0; fi
    # the root of scripts/frr-root.sh (the EVPN tests' route reflector): built here, where
    # mmdebstrap is, and seen inside at the same path
    helper=$(OVN_FRR_DEB13_CACHE=$cache bash "$here/scripts/frr-root.sh")
    # the sid root (OVN 26.03: the differential tests' oracle), seen inside at its own path
    sidroot=/
    if [ "$SUITE" != sid ]; then sidroot=$(bash "$0" sid --path); fi
    # the rest in a mount namespace of its own whose mounts are slaves of the host's
    OVN_FRR_ROOT_NS=$helper OVN_FRR_SID_ROOT=$sidroot \
        exec unshare --mount --propagation slave -- bash "$0" "$SUITE" "$@"
fi
helper=$OVN_FRR_ROOT_NS
sidroot=${OVN_FRR_SID_ROOT:-/}

mount --bind "$root" "$root"  # `ip netns exec` makes / a slave: / must be a mount point
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/run"
mkdir -p "$root/run/netns" "$root/src" "$root$helper"
mount --bind "$here" "$root/src"
mount --bind "$helper" "$root$helper"
if [ "$sidroot" != / ]; then
    mkdir -p "$root$sidroot"
    mount --rbind "$sidroot" "$root$sidroot"
fi
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
log "running: $*"
chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1 OVN_FRR_STACK=$STACK \
    OVN_FRR_DEB13_CACHE="$cache" OVN_FRR_SID_ROOT="$sidroot" \
    sh -c 'cd /src && "$@"' sh "$@"
