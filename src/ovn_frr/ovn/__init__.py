"""OVN adapter: OVSDB through ovsdbapp / the ovs IDL; frozen snapshots out, owned rows in."""
