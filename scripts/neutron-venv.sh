#!/usr/bin/env bash
# A virtualenv with OpenStack Neutron 29.0.0 (2026.1) from PyPI, for the tests that build
# Neutron's OVN-native BGP topology with Neutron's own code (scripts/neutron_topology.py).
# Built once and cached (~65 s, ~350 MB); prints its python.
#
#   scripts/neutron-venv.sh            build if needed, print the venv's python
#   OVN_FRR_DEB13_CACHE=DIR            where it is kept (default /var/cache/ovn-frr)
set -euo pipefail

VERSION=29.0.0
cache=${OVN_FRR_DEB13_CACHE:-/var/cache/ovn-frr}
venv=$cache/neutron-$VERSION-py$(python3 -c 'import sys; print("%d%d" % sys.version_info[:2])')

log() { printf 'neutron-venv: %s\n' "$*" >&2; }

if [ ! -f "$venv/.complete" ]; then
    mkdir -p "$cache"
    exec 9>"$cache/.neutron.lock"  # one build at a time: the second finds it made
    flock 9
    if [ ! -f "$venv/.complete" ]; then
        log "building $venv (neutron==$VERSION from PyPI, once)"
        rm -rf "$venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install -q --disable-pip-version-check "neutron==$VERSION" >&2
        touch "$venv/.complete"
    fi
fi
echo "$venv/bin/python"
