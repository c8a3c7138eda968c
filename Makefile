# The everyday commands, with the environment you installed into (pip install -e '.[local,test]'): its
# python, or the one PYTHON names (make test PYTHON=.venv/bin/python); .ci/lint takes its tools from PATH.
PYTHON ?= python
# Every benchmark in tests/perf, one after another (never two at once: they time the machine). BENCH picks
# some and ARGS is passed to each, as their docstrings say: make bench BENCH="big play" ARGS=--quick
BENCH ?= $(patsubst tests/perf/bench_%.py,%,$(wildcard tests/perf/bench_*.py))
ARGS ?=
DOCS := README.md $(wildcard docs/*.md)

.PHONY: check test-quick test snapshots bench docs

# The lint steps of CI: the formatter, the linter, the layers (import-linter), the types (mypy).
check:
	.ci/lint

# What you run while you work: the tests not marked slow, on every core.
test-quick:
	$(PYTHON) -m pytest -n auto -m "not slow"

# The whole suite, as CI runs it after the lint steps (the README's test command).
test:
	$(PYTHON) -m pytest -n auto

# Accept the new look of the screens whose snapshot tests fail. The policy: run `make test` first, open
# snapshot_report.html and look at every changed picture; update only when each change is one you meant,
# and commit the SVGs with the change that made them. Never update to make a failure you have not
# understood go away.
snapshots:
	$(PYTHON) -m pytest tests/tui/test_snapshots.py --snapshot-update

bench:
	@set -e; for name in $(BENCH); do echo "== tests.perf.bench_$$name"; $(PYTHON) -m tests.perf.bench_$$name $(ARGS); done

# Write the generated parts of the pages again (cog blocks calling docs/reference.py: the CLI's help, the
# keys, the settings, the module map); tests/test_docs.py fails while one is stale. cog (cogapp) comes
# with the test extra; without it this says so and writes nothing.
docs:
	@if $(PYTHON) -c "import cogapp" 2>/dev/null; then \
		$(PYTHON) -m cogapp -r $(DOCS); \
	else \
		echo "cog is not installed (pip install cogapp): nothing regenerated"; \
	fi
