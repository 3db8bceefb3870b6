# One task entry point; CI runs the same commands (see .ci/run and the README Quickstart).
PY ?= python
PYTEST = $(PY) -m pytest -q -p no:cacheprovider
# Two workers (pytest-xdist). The slow tests (processes, pseudo-terminals, signals) run on two
# workers too, work-stealing so the long ones do not leave a worker idle at the end: a run of
# the 353 slow tests took 513 s that way under load 8-10, against 728 s serially on an idle box.
PYTEST_2 = $(PYTEST) -n 2
# Dates the moved-date run uses: after claude-sonnet-4-5's end of life, and far ahead.
MOVED_DATES = 2027-06-01 2030-01-01

.PHONY: check lint type test test-fast test-slow test-dates bench
# CI: hypothesis derandomized, no example database (profile "ci" in tests/conftest.py).
check: export HYPOTHESIS_PROFILE = ci
check: lint type test test-dates

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

type:
	$(PY) -m mypy

# Everything, subprocess and long tests included: the fast part, then the slow, each on two workers.
test: test-fast test-slow

# Without the tests marked slow (those that start processes or take over a second).
test-fast:
	$(PYTEST_2) -m "not slow"

test-slow:
	$(PYTEST_2) --dist worksteal -m slow

# The tests whose outcome can depend on the date (marked `dates`), with the one clock moved
# (AGENTCTL_TODAY is read by agentctl/clock.py only and inherited by subprocesses); on two
# workers like the fast tests, which are all but 3 of them.
test-dates:
	@set -e; for day in $(MOVED_DATES); do \
		echo "+ AGENTCTL_TODAY=$$day"; \
		AGENTCTL_TODAY=$$day $(PYTEST_2) -m dates; \
	done

bench:
	$(PY) bench/run.py
