"""Kernel adapter: netlink (pyroute2) and network-namespace helpers."""
