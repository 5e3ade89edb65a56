from ovn_frr.cli import main

main()
