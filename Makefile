# One task entry point; CI runs the same commands (see .ci/run and the README Quickstart).
PY ?= python

.PHONY: check lint type test bench
check: lint type test

lint:
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

type:
	$(PY) -m mypy

test:
	$(PY) -m pytest -q

bench:
	$(PY) bench/run.py
