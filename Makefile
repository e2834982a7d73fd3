# One command per job. `make run` and `make test` install what they need first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
LISTEN ?= 127.0.0.1:50051
DATA   ?= ./data
CONSOLE ?= 127.0.0.1:8080
TORCH_VERSION ?= 2.13.0
# The Python warning filter (-W / PYTHONWARNINGS: action:message-start) that drops only
# setuptools' editable-install notice, added to any filters already set.
EDITABLE_QUIET := PYTHONWARNINGS="$${PYTHONWARNINGS:+$$PYTHONWARNINGS,}ignore:Editable installation"
# Where torch's CPU build comes from when this machine's pip cannot find it already
# (TORCH_INDEX= : the package index's default build, CUDA included on Linux).
TORCH_INDEX ?= https://download.pytorch.org/whl/cpu

.PHONY: install run test check types fuzz wheel-test hosts soak proto proto-check cli-docs lint docs format bench bench-cli clean clean-data

install: $(STAMP)

$(STAMP): pyproject.toml client/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	# The CPU build of torch first, so the embeddings extra never pulls a multi-GB CUDA build:
	# from what pip already finds (a wheel cache, a local index), else from TORCH_INDEX.
ifeq ($(TORCH_INDEX),)
	$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)"
else
	$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)+cpu" 2>/dev/null || \
		$(BIN)/pip install --quiet "torch==$(TORCH_VERSION)+cpu" --extra-index-url $(TORCH_INDEX)
endif
	# Both distributions, editable: the client (client/) and the service that depends on it.
	# setuptools' "Editable installation." notice (a folder named like the package in the
	# working directory, which is this checkout by design) is a Python warning that pip
	# passes on even with --quiet: that one warning is ignored by its message
	# (EDITABLE_QUIET); every other warning and every error still shows.
	$(EDITABLE_QUIET) $(BIN)/pip install --quiet -e ./client -e ".[dev]"
	# The client once more: where the service owned the `agentmem` script (before the client
	# distribution existed), replacing it removed the script the client had just written.
	$(EDITABLE_QUIET) $(BIN)/pip install --quiet --no-deps --force-reinstall -e ./client
	# The checkout on sys.path too, so a script in the folder that holds the clone imports the
	# package, not the clone's folder (also named agentmem) as an empty namespace package.
	$(BIN)/python -c "import pathlib, site; pathlib.Path(site.getsitepackages()[0], \
		'agentmem-checkout.pth').write_text(str(pathlib.Path.cwd()) + '\n')"
	touch $(STAMP)

run: install ## both services on embedded SQLite and the web console; prints your credential and an agent's
	$(BIN)/agentmem up --listen $(LISTEN) --data-dir $(DATA) --console $(CONSOLE)

# Tests wait on servers more than they compute: three workers, each test file on one of them.
TEST_WORKERS ?= 3
test: install ## the whole suite, through real servers (TEST_WORKERS=0: one process)
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

# The model-based tests run a few sequences here (CHECK_EXAMPLES), 20 in make test, more in make fuzz.
CHECK_EXAMPLES ?= 4
check: lint ## the fast layer after every change: lint, types, tests/unit, tests/retrieval, tests/service (no servers)
	AGENTMEM_FUZZ_EXAMPLES=$(CHECK_EXAMPLES) \
		$(BIN)/pytest -q -p no:cacheprovider tests/unit tests/retrieval tests/service

FUZZ_EXAMPLES ?= 200
FUZZ_STEPS    ?= 40
fuzz: install ## the model-based tests (source lifecycle, facts over time), many more sequences than make test
	AGENTMEM_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) AGENTMEM_FUZZ_STEPS=$(FUZZ_STEPS) \
		$(BIN)/pytest -q -p no:timeout tests/service/test_lifecycle_model.py \
		tests/test_lifecycle_model.py tests/service/test_fact_time_model.py

wheel-test: install ## build both wheels, install them in fresh venvs: up + doctor, the client alone (slow)
	AGENTMEM_WHEEL_TEST=1 $(BIN)/pytest -q tests/test_wheel.py

# The real hosts, pinned (docs/development.md says how to move a pin), from the npm registry.
HOSTS_DIR          ?= .hosts
CODEX_VERSION      ?= 0.171.0
INSPECTOR_VERSION  ?= 2.12.0
MCP_SDK_VERSION    ?= 1.32.2
GEMINI_VERSION     ?= 0.61.0
OPENCODE_VERSION   ?= 1.18.33
CLAUDE_CODE_VERSION ?= 2.1.332
hosts: install ## Codex, opencode, Claude Code, Gemini CLI, the MCP Inspector and SDK: real servers (npm)
	npm install --prefix $(HOSTS_DIR) --no-audit --no-fund --loglevel=error \
		@openai/codex@$(CODEX_VERSION) \
		@modelcontextprotocol/inspector@$(INSPECTOR_VERSION) \
		@modelcontextprotocol/sdk@$(MCP_SDK_VERSION) \
		@google/gemini-cli@$(GEMINI_VERSION) \
		opencode-ai@$(OPENCODE_VERSION) \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION)
	AGENTMEM_HOSTS=$(abspath $(HOSTS_DIR)) $(BIN)/pytest -q -p no:cacheprovider -n 0 \
		tests/test_hosts.py tests/test_host_turns.py

# Both modes by default, each on fresh services: mixed (inserts, searches, compare-and-swap
# races, watchers) and append (agents appending turns to shared and own conversations).
soak: install ## mixed then append-heavy load, checks after each (SOAK_ARGS="--mode append --clients 16 --seconds 60 --pgvector")
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

proto: install ## regenerate Python code and JSON Schemas from protos/ (and the app-server's)
	$(BIN)/python scripts/codegen.py
	rm -rf schemas/app-server
	$(BIN)/agentmem app-server generate-json-schema --experimental --out schemas/app-server/json
	$(BIN)/agentmem app-server generate-ts --experimental --out schemas/app-server/typescript

cli-docs: install ## regenerate docs/cli.md's command reference from the CLI's parser
	$(BIN)/python scripts/cli_reference.py

proto-check: install
	$(BIN)/python scripts/codegen.py --check

lint: install docs ## ruff, the type checker on the packages pyproject.toml lists, the docs site
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

types: install ## the type checker alone
	$(BIN)/mypy

docs: install ## the documentation site (docs/, mkdocs.yml); a broken link or anchor fails
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet --site-dir build/site

format: install
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: install ## retrieval, inserts, LoCoMo recall next to their floors (BENCH_ARGS=--million for 1M)
	$(BIN)/python -m bench.retrieval $(BENCH_ARGS)

bench-cli: install ## how fast the agentmem command answers (--version, --help, a search) beside python -c pass
	$(BIN)/python -m bench.cli_start $(BENCH_ARGS)

clean: ## remove the virtualenv and build output; the data folder is kept (make clean-data)
	rm -rf $(VENV) .pytest_cache build dist

clean-data: ## delete the data folder (DATA): every memory, the dev credentials, the logs
	rm -rf $(DATA)
