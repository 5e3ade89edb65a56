#!/usr/bin/env bash
# Run a command inside a Debian 13 (trixie) root: FRR 10.3, OVN 25.03, OVS 3.5, Python 3.13
# (scripts/root.sh trixie; default: every test tier). scripts/deb13.sh COMMAND runs anything
# else there, e.g. `scripts/deb13.sh /opt/ovn-frr-venv/bin/ovn-frr versions`.
exec bash "$(dirname "$0")/root.sh" trixie "$@"
