# The two commands a newcomer needs: `make run` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
# pytest-xdist's workers: a core each, at most 4 (a worker holds up to about 2 GB);
# `make test WORKERS=0` runs the tests in one process
WORKERS ?= $(shell n=$$(nproc); echo $$(( n < 4 ? n : 4 )))
DEMO := assets/demo.flac

.PHONY: run test setup setup-test lint bench demo clean

run: setup
	$(PY) -m app.main

test: setup-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	xvfb-run -a -s "-screen 0 1920x1080x24" $(PY) -m pytest -q -n $(WORKERS) --dist worksteal $(PYTEST_ARGS)

setup:
	scripts/setup.sh

setup-test:
	scripts/setup.sh --system

lint: setup
	$(VENV)/bin/ruff check .

bench: setup-test
	$(PY) bench/bench_engine.py
	$(PY) bench/bench_brushes.py
	xvfb-run -a -s "-screen 0 1920x1080x24" $(PY) bench/bench_gui.py

demo: setup
	$(PY) assets/make_demo.py $(DEMO)

clean:
	rm -rf $(VENV) out .pytest_cache .ruff_cache
