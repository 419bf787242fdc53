# SPDX-License-Identifier: MIT
# pith - the only build file. Objects go under build/<profile>/, binaries at
# the top: `make && ./pith`. See docs/DESIGN.md §1 for the profiles.

CC      ?= cc
CLANG   ?= clang
PYTHON  ?= /usr/bin/python3
FUZZ_SECONDS ?= 60

WARN    = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wvla -Wpointer-arith -Wformat=2 -Wundef
CSTD    = -std=c11
OPT     ?= -O2 -g
CPPFLAGS_ALL = -Isrc -D_GNU_SOURCE
CFLAGS_ALL   = $(CSTD) $(WARN) $(OPT) -fno-common -MMD -MP $(CFLAGS)

CORE_SRC   = $(sort $(wildcard src/core/*.c))
SYS_SRC    = src/sys/sys_libc.c src/sys/resolve.c
SERVER_SRC = $(sort $(wildcard src/server/*.c))
CLI_SRC    = src/cli/config.c src/cli/main.c
FULL_SRC   = $(CORE_SRC) $(SYS_SRC) $(SERVER_SRC) $(CLI_SRC)
FULL_LIBS  = -luring

UNIT_SRC   = $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC   = $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_NAMES = $(patsubst fuzz/fuzz_%.c,%,$(FUZZ_SRC))

ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: all asan unit core-freestanding fuzz fuzz-smoke test test-asan check clean \
        format format-check demo bench mutate

all: pith

# Keep intermediate objects (unit, fuzz) between runs.
.SECONDARY:

# --- full build ---------------------------------------------------------------
FULL_OBJ = $(patsubst src/%.c,build/full/%.o,$(FULL_SRC))
build/full/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

pith: $(FULL_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(FULL_LIBS) $(LDFLAGS)

# --- ASan + UBSan build of the same sources -------------------------------------
ASAN_OBJ = $(patsubst src/%.c,build/asan/%.o,$(FULL_SRC))
build/asan/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) -DPITH_ASAN=1 -c $< -o $@

pith-asan: $(ASAN_OBJ)
	$(CC) $(CFLAGS_ALL) $(ASAN_FLAGS) -o $@ $^ $(FULL_LIBS) $(LDFLAGS)

asan: pith-asan

# --- C unit tests of src/core, under ASan + UBSan ---------------------------------
UNIT_CORE_OBJ = $(patsubst src/%.c,build/unit/%.o,$(CORE_SRC))
build/unit/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) -c $< -o $@
build/unit/test_%: tests/unit/test_%.c tests/unit/unit.h $(UNIT_CORE_OBJ)
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) -Itests/unit $(CFLAGS_ALL) -O1 $(ASAN_FLAGS) -o $@ $< $(UNIT_CORE_OBJ)

UNIT_BINS = $(patsubst tests/unit/test_%.c,build/unit/test_%,$(UNIT_SRC))
unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do $$t; done

# --- the core builds freestanding, without a libc header in sight ----------------
# Each file is compiled with -ffreestanding -nostdinc (only the compiler's own
# headers), the objects are linked together into one relocatable object, and
# the only undefined symbols allowed are the four memory functions compilers
# emit calls to and the host's assertion hook.
FREE_INC = $(shell $(CC) -print-file-name=include)
FREE_OBJ = $(patsubst src/%.c,build/free/%.o,$(CORE_SRC))
build/free/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) -ffreestanding -nostdinc -isystem $(FREE_INC) -Isrc $(CSTD) $(WARN) -Os -fno-builtin \
	    -fno-stack-protector -c $< -o $@
build/free/core.o: $(FREE_OBJ)
	$(CC) -nostdlib -r -o $@ $^
core-freestanding: build/free/core.o
	@undef=$$(nm -u $< | awk '{print $$2}' | grep -vxE 'memcpy|memmove|memset|memcmp|pith_assert_fail' || true); \
	if [ -n "$$undef" ]; then echo "src/core needs symbols outside itself: $$undef"; exit 1; fi; \
	echo "core-freestanding: src/core links alone (-ffreestanding -nostdinc -nostdlib)"

# --- libFuzzer targets ----------------------------------------------------------------
FUZZ_BINS = $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_NAMES))
build/fuzz/fuzz_%: fuzz/fuzz_%.c $(CORE_SRC) $(wildcard fuzz/ref/*.c) $(wildcard src/core/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS_ALL) -Ifuzz $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ $< $(CORE_SRC) $(wildcard fuzz/ref/*.c)
fuzz: $(FUZZ_BINS)

# Each target runs FUZZ_SECONDS from the checked-in seeds; new inputs go to a
# scratch corpus under build/ so the tree stays clean.
fuzz-smoke: $(patsubst %,fuzz-smoke-%,$(FUZZ_NAMES))
fuzz-smoke-%: build/fuzz/fuzz_%
	@rm -rf build/fuzz/corpus_$*; mkdir -p build/fuzz/corpus_$*
	@echo "fuzz-smoke: $* for $(FUZZ_SECONDS) s"
	@build/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -dict=fuzz/http.dict -artifact_prefix=build/fuzz/$*- build/fuzz/corpus_$* fuzz/corpus/$* \
	    2>build/fuzz/$*.log \
	    || { tail -50 build/fuzz/$*.log; exit 1; }
	@printf 'fuzz-smoke: %s: %s executions, %s crashes\n' $* \
	    "$$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$*.log)" \
	    "$$(grep -c '^==.*ERROR' build/fuzz/$*.log || true)"

# --- black-box tests against the live binary ----------------------------------------
# -rs: every pass lists its skips with their reasons. The whole suite runs
# once per event loop; the io_uring pass fails where io_uring cannot run
# (PITH_ALLOW_NO_URING=1 turns it into skips, which CI never sets). With
# PITH_CI=1 (.ci/run) a skip not in tests/skips_allowed.txt fails the pass.
PYTEST = $(PYTHON) -m pytest -q -rs -p no:cacheprovider
test: pith
	PITH_IO=epoll PITH_BIN=$(CURDIR)/pith $(PYTEST) tests
	PITH_IO=uring PITH_BIN=$(CURDIR)/pith $(PYTEST) tests

test-asan: pith-asan
	PITH_IO=epoll PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) tests
	PITH_IO=uring PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) tests

# The steps run in this order even under `make -j check`: the builds (and
# the unit tests) may run side by side, but the pytest passes have timing
# assertions (timeouts, slowloris, drain) and must not share the CPUs with
# each other or with the fuzzers, which keep a core busy for FUZZ_SECONDS
# each. So the passes run one after another, and fuzz-smoke after them, its
# targets two at a time (one per core). scripts/deps first installs (as root)
# or names (otherwise) the Debian packages all this needs.
check:
	scripts/deps check
	$(MAKE) all core-freestanding unit asan fuzz
	$(MAKE) test
	$(MAKE) test-asan
	$(MAKE) test-testssl
	$(MAKE) -j2 fuzz-smoke
	$(MAKE) format-check
	@echo "make check: all passed"

# --- HTTPS test rigs (issue 10) -----------------------------------------------------------
# test-ktls: kernel TLS verified inside a user-mode Linux guest (scripts/uml-run),
# both event loops in one boot. `make test` already runs that module once per
# loop (the ASan passes skip it: tests/skips_allowed.txt), so check has no step
# of its own for it. test-testssl: testssl.sh scans pith's TLS port; the policy
# does not depend on the loop or the build, so check runs it once, after the
# pytest passes (tests/tls_testssl_scan.py is not named test_*.py for that).
.PHONY: test-ktls test-testssl
test-ktls: pith
	PITH_IO= PITH_BIN=$(CURDIR)/pith $(PYTEST) tests/test_tls_ktls_uml.py
test-testssl: pith
	PITH_IO= PITH_BIN=$(CURDIR)/pith $(PYTEST) tests/tls_testssl_scan.py

# --- style --------------------------------------------------------------------------------
FORMAT_FILES = $(sort $(wildcard src/*/*.[ch] tests/unit/*.[ch] fuzz/*.c fuzz/ref/*.[ch] bench/*.c))
format:
	clang-format -i $(FORMAT_FILES)
format-check:
	clang-format --dry-run -Werror $(FORMAT_FILES)

# --- the demo site of the README's Quick start ---------------------------------------
# Builds (installing missing Debian packages as root) and serves demo/.
demo:
	scripts/quickstart

build/bench/donothing: bench/donothing.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -o $@ $<

# Figures, never pass/fail: see bench/run --help. BENCH_ARGS=--repeats 1 ...
# (--quick: a few seconds). The HTTPS matrix (bench/results/RESULTS-https.md)
# follows the plain one.
bench: pith build/bench/donothing
	bench/run $(BENCH_ARGS)
	bench/run --https $(BENCH_ARGS)

# Mutation campaign over src/core and src/server, on a private copy of the tree
# (an hour or more; never part of check): see scripts/mutate --help. The report
# goes to build/mutate/report.md; MUTATE_ARGS=--list shows the mutants.
mutate:
	nice -n 15 scripts/mutate $(MUTATE_ARGS)

clean:
	rm -rf build pith pith-asan

-include $(shell find build -name '*.d' 2>/dev/null)
