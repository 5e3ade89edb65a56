VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: setup test test-here test-deb13 test-sid unit lint demo clean-labs

setup:
	bash scripts/setup.sh

# The test command (README, CI): set up, lint, type-check, run every tier on this machine's
# stack, then again inside a Debian 13 root (FRR 10.3, OVN 25.03, OVS 3.5; scripts/deb13.sh)
# and a Debian sid root (FRR 10.7, OVN 26.03, OVS 4.0; scripts/root.sh sid).
test: setup lint test-here test-deb13 test-sid

# pytest exit 5 (nothing collected) means broken test wiring: a failure, said plainly.
test-here: setup
	@$(PY) -m pytest -q tests; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; exit 1; fi; exit $$rc

test-deb13:
	bash scripts/deb13.sh

test-sid:
	bash scripts/root.sh sid

unit: setup
	$(PY) -m pytest -q tests/unit

lint:
	$(VENV)/bin/ruff check src tests scripts bench
	$(VENV)/bin/ruff format --check src tests scripts bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

demo: setup
	$(VENV)/bin/ovn-frr demo

clean-labs:
	$(VENV)/bin/ovn-frr lab down --all
