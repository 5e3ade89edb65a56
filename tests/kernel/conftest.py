"""The kernel tier: scenarios that need a kernel with vrf and dummy devices run inside a
User-Mode Linux guest (``ovn_frr.lab.uml``). ``test_uml.py`` boots one guest per module of
``guest/`` and runs it there; the modules of ``guest/`` are collected only inside a guest."""

from __future__ import annotations

import os

from ovn_frr.lab.uml import GUEST_ENV

collect_ignore = [] if os.environ.get(GUEST_ENV) else ["guest"]
