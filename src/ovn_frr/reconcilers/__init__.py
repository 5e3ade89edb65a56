"""The pipelines of the agent, one reconciler each: OVN (the one snapshot), import, advertise,
FRR. Each runs as its own asyncio task with its own worker thread and back-off (see
:mod:`ovn_frr.reconcilers.base`)."""
