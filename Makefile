# lakecdc — `make help` lists the targets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install bytecode test test-unit test-packed faults fuzz chaos lint demo bench bench-maintenance bench-lookup bench-mysql bench-mysql-keys bench-scale clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

$(STAMP): pyproject.toml deploy/install-system-deps.sh
	@bash deploy/install-system-deps.sh
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -e ".[test]"
	@touch $(STAMP)

# Python compiles each module it finds without bytecode at every import, in every job, planner and worker
# process, and with PYTHONDONTWRITEBYTECODE set (CI's shell sets it) it never keeps the result: lakecdc's
# modules cost each process ~0.3-0.5 s (`import ingest.job`, load 4). Compiled here once (only what changed).
bytecode: $(STAMP)
	@$(PY) -m compileall -q -j 0 ingest formats sinks schema_evolution deploy bench tests

install: $(STAMP) ## create ./.venv and install lakecdc with its test tools (and a JDK via apt-get when root)

test: bytecode ## run the whole test suite (unit + integration with real Spark, broker and Paimon files)
	@# the tests that start no server on both cores (pytest-xdist), then the server tests one at a time:
	@# Spark's Python workers fail to connect back when two jobs share 2 cores. Both run; either failing fails.
	$(PY) -m pytest -q -n 2 -m "not integration" --durations=10; unit=$$?; \
	$(PY) -m pytest -q -m "integration and not packed and not faults" --durations=30; servers=$$?; \
	test $$unit -eq 0 && test $$servers -eq 0

test-unit: bytecode ## only the fast tests that start no server
	$(PY) -m pytest -q -m "not integration"

fuzz: bytecode ## the format fuzz tests with 100x make test's examples: 5,000 per mutation test, 20,000 of random bytes (~2 h)
	HYPOTHESIS_PROFILE=fuzz $(PY) -m pytest -q -p no:cacheprovider --timeout 0 tests/formats/test_fuzz.py

chaos: bytecode ## the full chaos suite: 20 SIGKILLs over 200,000 Kafka changes, 10 over a 100,000-row MySQL snapshot and binlog
	LAKECDC_CHAOS_KILLS=20 LAKECDC_CHAOS_CHANGES=200000 LAKECDC_CHAOS_MYSQL_KILLS=10 LAKECDC_CHAOS_MYSQL_ROWS=100000 \
		$(PY) -m pytest -q -s -p no:cacheprovider -m chaos tests/chaos

faults: bytecode ## crash points (SIGKILL at eight named points), a broker gone 30 s and 90 s, MariaDB stopped 45 s (~12 min)
	$(PY) -m pytest -q -p no:cacheprovider -m faults tests/integration

test-packed: bytecode ## lakecdc in a venv-pack archive, shipped with spark-submit --archives to the loopback standalone cluster (~4 min)
	$(PY) -m pytest -q -p no:cacheprovider -m packed tests/integration/cluster/test_packed_environment.py

lint: $(STAMP) ## ruff (lint + format check), mypy, the import-linter contracts (pyproject.toml), boundary and size tests
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-logo --no-cache
	$(PY) -m pytest -q -p no:cacheprovider tests/test_boundary.py tests/test_code_size.py

demo: bytecode ## local broker + sample CDC stream for two tables -> kafka-sync-database -> ./warehouse
	$(PY) -m deploy.demo

bench: bytecode ## benchmarks vs a single-process floor and a naive peer (1M messages, 5 alternating runs; ~13 min), then debezium-avro vs debezium-json decoding -> bench/results/
	$(PY) -m bench.run
	$(PY) -m bench.formats_decode --messages 20000 | tee bench/results/formats-decode-$$(date -u +%Y%m%dT%H%M%SZ).md

bench-maintenance: bytecode ## read/commit time after 1,000 commits: no maintenance, MOR, COW, MOW, lookup, full-compaction changelog (~10 min)
	$(PY) -m bench.maintenance

bench-lookup: bytecode ## lookup and MOW compaction per commit in 100k- and 1M-key buckets, with and without the file cache (~2 min)
	$(PY) -m bench.lookup

bench-mysql: bytecode ## MySQL snapshot rows/s and binlog rows/s vs pymysql / mysql-replication floors, then a 1,000-column table's snapshot (~6 min)
	$(PY) -m bench.mysql
	$(PY) -m bench.mysql_wide

bench-mysql-keys: bytecode ## 5M-row snapshot of a UUID-keyed table vs an integer-keyed one, 3 alternating runs each (~20 min)
	$(PY) -m bench.mysql_keys

bench-scale: bytecode ## database sync over 1,000 tables (Kafka and MySQL): start-up to first commit, micro-batch times, peak memory; then a ~1.9 GiB binlog backlog, then a 1.5 GiB topic of 1,000-column messages (~16 min)
	$(PY) -m bench.scale
	$(PY) -m bench.backlog
	$(PY) -m bench.kafka_wide --messages 40000 --bounds 0,5000

clean: ## remove the virtualenv, the demo warehouse and caches
	rm -rf $(VENV) warehouse .pytest_cache .mypy_cache .ruff_cache *.egg-info
