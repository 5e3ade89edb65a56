"""Local Open vSwitch adapter: EVPN's OVS bridges, OVN's bridge mappings, OpenFlow tables."""
