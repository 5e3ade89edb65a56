"""ovn-frr: FRR-based BGP/EVPN plugin for OVN."""

__version__ = "0.1.0"
