"""The pure core: reconcile functions from frozen snapshots (OVN state, FRR RIB, node config)
to desired state (FRR config model, OVN route set). Imports no adapter package."""
