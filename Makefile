# Two commands a newcomer needs: `make demo` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TOKENIZERS_PARALLELISM := false

.PHONY: install demo demo-postgres test test-stress browser lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	# The CPU build of torch first: letting sentence-transformers pull torch would fetch a multi-GB CUDA build.
	$(PY) -m pip install --quiet torch==2.13.0
	$(PY) -m pip install --quiet -e '.[test,mcp,hermes,ann,web,postgres,postgres-server]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/bowerbird demo

# the same demo with the memory in PostgreSQL: a private server with pgvector is started for it and removed after
# (BOWERBIRD_DATABASE_URL=postgresql://... uses an empty database of yours instead)
demo-postgres: $(STAMP)
	$(VENV)/bin/bowerbird demo --postgres

test: $(STAMP) browser
	$(PY) -m pytest -q

test-stress: $(STAMP)
	$(PY) -m pytest -q -s -m stress tests/stress

# The inspector's browser tests drive Debian's chromium: installed here when missing and possible, never failing.
browser:
	@sh scripts/ensure-chromium.sh

lint: $(STAMP)
	$(VENV)/bin/ruff check hermes_bowerbird tests benchmarks
	$(VENV)/bin/ruff format --check hermes_bowerbird tests benchmarks
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) benchmarks/bench_recall.py
	$(PY) benchmarks/bench_capture.py
	$(PY) benchmarks/bench_vectors.py
	$(PY) benchmarks/bench_embed.py
	$(PY) benchmarks/bench_maintenance.py
	$(PY) benchmarks/bench_provider.py
	$(PY) benchmarks/bench_host_budgets.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache
