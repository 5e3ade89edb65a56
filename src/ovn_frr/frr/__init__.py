"""FRR adapter: render config, apply it through vtysh, read ``show ... json``."""
