# SPDX-License-Identifier: MIT
# pith - the only build file. Objects go under build/<profile>/, binaries at
# the top: `make && ./pith`. See docs/DESIGN.md §1 for the profiles.

CC      ?= cc
CLANG   ?= clang
PYTHON  ?= /usr/bin/python3
FUZZ_SECONDS ?= 30

WARN    = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
          -Wvla -Wpointer-arith -Wformat=2 -Wundef
CSTD    = -std=c11
OPT     ?= -O2 -g
CPPFLAGS_ALL = -Isrc -D_GNU_SOURCE $(CPPFLAGS)
CFLAGS_ALL   = $(CSTD) $(WARN) $(OPT) -fno-common -MMD -MP $(CFLAGS)

CORE_SRC   = $(sort $(wildcard src/core/*.c))
# What only the protocols beyond HTTP/1 use (HTTP/2's and HTTP/3's field
# list): not in pith-tiny or the router, whose field names have no
# lowercase spelling (response.h under PITH_TINY).
CORE_FULL_ONLY = src/core/field_list.c
# sys.h over glibc, split by job as pith-tiny's sys_raw_*.c are (files, net,
# proc, users; what they share is in src/sys/sys_libc.h).
SYS_LIBC_SRC = src/sys/sys_libc_files.c src/sys/sys_libc_net.c src/sys/sys_libc_proc.c \
               src/sys/sys_libc_users.c
SYS_SRC    = $(SYS_LIBC_SRC) src/sys/resolve.c src/sys/sd.c src/sys/sandbox.c
# The server's rooms (docs/DESIGN.md §1), from the shared facilities up to
# the processes.
SERVER_ROOMS = base event tls http http1 http2 process
SERVER_SRC = $(sort $(foreach r,$(SERVER_ROOMS),$(wildcard src/$(r)/*.c)))
# The command line and the configuration file (config.h): the parse, each
# option's value, the checks once all are known, the server's settings.
CONFIG_SRC = src/cli/config.c src/cli/config_parse.c src/cli/config_apply.c src/cli/config_check.c \
             src/cli/config_settings.c src/cli/config_file.c src/cli/conffile.c
CLI_SRC    = $(CONFIG_SRC) src/cli/usage.c src/cli/start.c src/cli/main.c src/cli/sockets.c \
             src/cli/check.c
# `pith compress` (issue 11): the subcommand and its codecs; full build only.
COMPRESS_SRC  = src/cli/compress.c src/cli/compress_report.c src/cli/compress_files.c \
                src/cli/compress_tree.c src/cli/compress_variant.c src/cli/compress_stale.c \
                src/cli/codec.c
COMPRESS_LIBS = -lz -lbrotlienc -lzstd -lpthread
# Automatic HTTPS (issue 35): the ACME client, its process and the challenge
# table the workers answer from; full build only. -lcurl: HTTPS to the CA
# (libcurl4-openssl-dev), -ljansson: its JSON (libjansson-dev).
ACME_SRC   = $(sort $(wildcard src/acme/*.c))
ACME_LIBS  = -lcurl -ljansson
FULL_SRC   = $(CORE_SRC) $(SYS_SRC) $(SERVER_SRC) $(CLI_SRC) $(COMPRESS_SRC) $(ACME_SRC)
# -lssl -lcrypto: HTTPS (TLS_SRC, in SERVER_SRC), OpenSSL 3 from Debian (libssl-dev)
TLS_SRC    = src/tls/tls.c src/tls/tls_ctx.c src/tls/tls_tickets.c
# -lcrypt: basic auth (issue 22), libxcrypt's crypt_rn (libcrypt-dev)
AUTH_SRC   = src/http/auth.c
# -lnghttp2: HTTP/2 (issue 20; H2_SRC), framing, HPACK and flow control (libnghttp2-dev)
H2_SRC     = src/http2/h2_conn.c src/http2/h2_mem.c src/http2/h2_send.c src/http2/h2_stream.c \
             src/http2/h2_worker.c
# HTTP/3 (issue 34; src/http3/, H3_SRC): QUIC from ngtcp2 >= 1.11 with its GnuTLS crypto helper,
# HTTP/3 and QPACK from nghttp3 >= 1.8 (Debian 12: bookworm-backports; Debian 13: main; see
# scripts/deps). Found by pkg-config; without them pith builds without HTTP/3 and says so
# (--version, the start line), and `--http3 on` exits 2 naming the packages.
PKG_CONFIG ?= pkg-config
H3_PKGS    = libngtcp2 >= 1.11 libngtcp2_crypto_gnutls >= 1.11 libnghttp3 >= 1.8 gnutls
HTTP3     ?= $(shell $(PKG_CONFIG) --exists '$(H3_PKGS)' 2>/dev/null && echo yes || echo no)
ifeq ($(HTTP3),yes)
H3_SRC     = $(sort $(wildcard src/http3/*.c))
H3_LIBS    = $(shell $(PKG_CONFIG) --libs '$(H3_PKGS)')
CPPFLAGS_ALL += -DPITH_HTTP3=1 $(shell $(PKG_CONFIG) --cflags '$(H3_PKGS)')
H3_CLIENT  = build/h3client # the tests' and the bench's HTTP/3 client (tests/h3client.c)
else
H3_SRC     =
H3_LIBS    =
H3_CLIENT  =
endif
FULL_SRC  += $(H3_SRC)
FULL_LIBS  = -luring -lssl -lcrypto -lcrypt -lnghttp2 $(COMPRESS_LIBS) $(ACME_LIBS) $(H3_LIBS)

UNIT_SRC   = $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC   = $(sort $(wildcard fuzz/fuzz_*.c))
ifneq ($(HTTP3),yes)
FUZZ_SRC  := $(filter-out fuzz/fuzz_h3.c,$(FUZZ_SRC)) # the HTTP/3 glue needs ngtcp2 and nghttp3
endif
FUZZ_NAMES = $(patsubst fuzz/fuzz_%.c,%,$(FUZZ_SRC))

ASAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

.PHONY: all asan unit core-freestanding fuzz fuzz-smoke test test-tls test-h2 test-h3 test-asan check clean \
        format format-check demo bench bench-compress bench-stats mutate tiny cross \
        $(addprefix cross-,$(TINY_ARCHES)) test-tiny test-cross test-arm64-kernel size-tiny \
        router test-router test-router-cross cross-router-mips16e-mips cross-router-mips16e-mipsel $(addprefix cross-router-,$(TINY_ARCHES))

all: pith

# Keep intermediate objects (unit, fuzz) between runs.
.SECONDARY:

# --- full build ---------------------------------------------------------------
# The test hooks (src/testhook/testhook.h): requests that only the test
# builds understand, to prove the sandbox holds; pith gets the empty version.
# pith-testhook is pith's objects with the hooks for none.c (the release
# allow-lists unchanged), which tests/test_sandbox.py runs beside pith; it
# is never installed.
FULL_OBJ = $(patsubst src/%.c,build/full/%.o,$(FULL_SRC) src/testhook/none.c)
TESTHOOK_LIBC = src/testhook/common.c src/testhook/libc.c
build/full/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -c $< -o $@

pith: $(FULL_OBJ)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(FULL_LIBS) $(LDFLAGS)

pith-testhook: $(filter-out %/testhook/none.o,$(FULL_OBJ)) \
               $(patsubst src/%.c,build/full/%.o,$(TESTHOOK_LIBC))
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(FULL_LIBS) $(LDFLAGS)

# --- ASan + UBSan build of the same sources -------------------------------------
ASAN_OBJ = $(patsubst src/%.c,build/asan/%.o,$(FULL_SRC) $(TESTHOOK_LIBC))
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

# --- pith-tiny: the freestanding build (docs/DESIGN.md, "The tiny build") --------------
# No libc, no heap, no library: src/core, the server over src/sys/sys_raw_*.c
# (raw system calls; numbers in src/sys/arch/, written by scripts/tiny-arch),
# the epoll loop (no io_uring), no HTTPS (TLS_SRC is left out and
# tls.h gives the shared code inline no-ops), the worker sandbox over
# src/sys/sandbox_raw.c, and src/cli/main_tiny.c; src/sys/raw/ stands in for the libc
# headers the shared code includes. `make tiny` builds ./pith-tiny (x86-64,
# objects under build/tiny/); `make cross-ARCH` builds build/tiny-ARCH/pith-tiny
# with Debian's cross compiler, for ARCH in TINY_CROSS. libgcc is linked for
# the 64-bit division helpers 32-bit ABIs need (it is the compiler's own).
# Each link writes its map beside the objects (pith-tiny.map), from which
# scripts/tiny-size --groups says where the bytes go.
TINY_SRC = $(filter-out $(CORE_FULL_ONLY),$(CORE_SRC)) src/sys/sys_raw_files.c src/sys/sys_raw_net.c src/sys/sys_raw_proc.c \
           src/sys/sys_raw_users.c src/sys/rt_raw.c src/sys/sd_raw.c src/sys/fmt_raw.c \
           src/sys/resolve.c $(filter-out src/event/loop_uring%.c $(TLS_SRC) $(AUTH_SRC) $(H2_SRC),$(SERVER_SRC)) \
           src/sys/sandbox_raw.c src/testhook/none.c \
           $(CONFIG_SRC) src/cli/usage.c src/cli/start.c src/cli/sockets.c src/cli/check.c \
           src/cli/main_tiny.c
TINY_CROSS  = aarch64 arm mips mipsel riscv64
TINY_ARCHES = x86_64 $(TINY_CROSS)
TINY_CC_x86_64  = gcc
TINY_CC_aarch64 = aarch64-linux-gnu-gcc
TINY_CC_arm     = arm-linux-gnueabihf-gcc
TINY_CC_mips    = mips-linux-gnu-gcc
TINY_CC_mipsel  = mipsel-linux-gnu-gcc
TINY_CC_riscv64 = riscv64-linux-gnu-gcc
TINY_ARCH_arm    = -mthumb
# mips: -mno-abicalls -G 0, so no $$gp (globals by absolute address) and no
# crt to set it up. ld warns that libgcc's objects are abicalls: the ones
# linked (64-bit shifts and divisions) are leaf code that never reads $$gp.
TINY_ARCH_mips   = -mno-abicalls -G 0
TINY_ARCH_mipsel = $(TINY_ARCH_mips)
# riscv64: small constants in .rodata, not .srodata inside .sdata, so the
# binary has no initialized data segment (a page of the file, and ld's RWX
# warning); gp-relative access to .sbss goes with it, a net 2.5 KiB smaller.
TINY_ARCH_riscv64 = -msmall-data-limit=0
TINY_OBJCOPY_x86_64 = objcopy
TINY_DIR_x86_64 = build/tiny
TINY_BIN_x86_64 = pith-tiny
TINY_CFLAGS = $(CSTD) $(WARN) -Os -ffreestanding -nostdinc -isystem src/sys/raw -Isrc -DPITH_TINY=1 \
              -fno-stack-protector -fno-pic -fno-pie -fno-common -ffunction-sections \
              -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables \
              -MD -MP $(TINY_EXTRA)
TINY_LDFLAGS = -nostdlib -static -no-pie -Wl,--gc-sections -Wl,-e,_start -Wl,--build-id=none \
               -Wl,-z,noseparate-code -Wl,-z,norelro -s
# After the link: the section header table goes too (scripts/sstrip.c, a host
# tool: the kernel and qemu-user read program headers only; issue 36, about
# 350 bytes on x86-64 and 410 on mips). The link maps keep the sections.
SSTRIP = build/tools/sstrip
$(SSTRIP): scripts/sstrip.c
	@mkdir -p $(@D)
	$(CC) -std=c11 -O2 -Wall -Wextra -Werror -o $@ $<

define tiny_rules
TINY_DIR_$(1) ?= build/tiny-$(1)
TINY_OBJCOPY_$(1) ?= $$(TINY_CC_$(1):-gcc=-objcopy)
TINY_BIN_$(1) ?= build/tiny-$(1)/pith-tiny
TINY_OBJ_$(1) = $$(patsubst src/%.c,$$(TINY_DIR_$(1))/%.o,$$(TINY_SRC))
$$(TINY_DIR_$(1))/%.o: src/%.c
	@mkdir -p $$(@D)
	@echo "  CC [$(1)] $$<"
	@$$(TINY_CC_$(1)) $$(TINY_CFLAGS) $$(TINY_ARCH_$(1)) \
	    -isystem $$$$($$(TINY_CC_$(1)) -print-file-name=include) -c $$< -o $$@
$$(TINY_BIN_$(1)): $$(TINY_OBJ_$(1)) | $(SSTRIP)
	$$(TINY_CC_$(1)) $$(TINY_ARCH_$(1)) $$(TINY_LDFLAGS) -Wl,-Map,$$(TINY_DIR_$(1))/pith-tiny.map \
	    -o $$@ $$^ -lgcc
	@$$(TINY_OBJCOPY_$(1)) -R .comment $$@
	@$(SSTRIP) $$@
cross-$(1): $$(TINY_BIN_$(1))
# The same objects with src/testhook/common.c and raw.c for none.c: the
# test hooks, for proving the sandbox (tests/test_sandbox.py under
# test-tiny; under a real arm64 kernel, tests/test_tiny_arm64_kernel.py).
$$(TINY_DIR_$(1))/pith-tiny-testhook: $$(filter-out %/testhook/none.o,$$(TINY_OBJ_$(1))) \
                                      $$(TINY_DIR_$(1))/testhook/common.o \
                                      $$(TINY_DIR_$(1))/testhook/raw.o
	$$(TINY_CC_$(1)) $$(TINY_ARCH_$(1)) $$(TINY_LDFLAGS) -o $$@ $$^ -lgcc
	@$$(TINY_OBJCOPY_$(1)) -R .comment $$@
endef
$(foreach a,$(TINY_ARCHES),$(eval $(call tiny_rules,$(a))))

# --- the router profile (docs/DESIGN.md, "The router profile"; issue 21) ---------------
# `make tiny PROFILE=router` builds ./pith-router: src/core and the raw system
# calls of pith-tiny under a small server floor written for size (src/router/:
# one epoll loop, a direct response writer, sendfile), -Oz with link-time
# optimization; core's MIME table keeps its MIME_R entries (PITH_ROUTER).
# `make cross PROFILE=router` (or cross-router-ARCH) builds
# build/router-ARCH/pith-router. Objects under build/router[-ARCH]/.
ROUTER_SRC = $(filter-out $(CORE_FULL_ONLY),$(CORE_SRC)) src/sys/sys_raw_files.c src/sys/sys_raw_net.c src/sys/sys_raw_proc.c \
             src/sys/rt_raw.c src/sys/resolve.c src/router/serve.c src/router/answer.c \
             src/router/access_log.c src/router/worker.c src/router/router.c src/router/main_router.c
ROUTER_CFLAGS = $(subst -Os,-Oz,$(TINY_CFLAGS)) -DPITH_ROUTER=1 -flto
ROUTER_DIR_x86_64 = build/router
ROUTER_BIN_x86_64 = pith-router

define router_rules
ROUTER_DIR_$(1) ?= build/router-$(1)
ROUTER_BIN_$(1) ?= build/router-$(1)/pith-router
ROUTER_OBJ_$(1) = $$(patsubst src/%.c,$$(ROUTER_DIR_$(1))/%.o,$$(ROUTER_SRC))
$$(ROUTER_DIR_$(1))/%.o: src/%.c
	@mkdir -p $$(@D)
	@echo "  CC [router $(1)] $$<"
	@$$(TINY_CC_$(1)) $$(ROUTER_CFLAGS) $$(TINY_ARCH_$(1)) \
	    -isystem $$$$($$(TINY_CC_$(1)) -print-file-name=include) -c $$< -o $$@
$$(ROUTER_BIN_$(1)): $$(ROUTER_OBJ_$(1)) | $(SSTRIP)
	$$(TINY_CC_$(1)) $$(TINY_ARCH_$(1)) -Oz -flto $$(TINY_LDFLAGS) \
	    -Wl,-Map,$$(ROUTER_DIR_$(1))/pith-router.map -o $$@ $$^ -lgcc
	@$$(TINY_OBJCOPY_$(1)) -R .comment $$@
	@$(SSTRIP) $$@
cross-router-$(1): $$(ROUTER_BIN_$(1))
endef
$(foreach a,$(TINY_ARCHES),$(eval $(call router_rules,$(a))))

# MIPS16e (mips16e-ARCH, for ARCH mips and mipsel): the same router in the
# compact 16-bit encoding, for MIPS32 cores that have the MIPS16e ASE (many
# router SoCs; not all, hence a target of its own): every file but the system
# call stubs (sys_raw_*.c and rt_raw.c, whose inline assembly is 32-bit) is
# compiled -mips16 -minterlink-mips16; no LTO, which would mix the two modes
# inside one function. build/router-mips16e-ARCH/pith-router.
ROUTER_M16_RAW = src/sys/sys_raw_files.c src/sys/sys_raw_net.c src/sys/sys_raw_proc.c src/sys/rt_raw.c
define router_m16_rules
ROUTER_M16_DIR_$(1) = build/router-mips16e-$(1)
ROUTER_M16_OBJ_$(1) = $$(patsubst src/%.c,$$(ROUTER_M16_DIR_$(1))/%.o,$$(ROUTER_SRC))
$$(ROUTER_M16_DIR_$(1))/%.o: src/%.c
	@mkdir -p $$(@D)
	@echo "  CC [router mips16e $(1)] $$<"
	@$$(TINY_CC_$(1)) $$(subst -flto,,$$(ROUTER_CFLAGS)) $$(TINY_ARCH_$(1)) \
	    $$(if $$(filter $$<,$$(ROUTER_M16_RAW)),,-mips16 -minterlink-mips16) \
	    -isystem $$$$($$(TINY_CC_$(1)) -print-file-name=include) -c $$< -o $$@
$$(ROUTER_M16_DIR_$(1))/pith-router: $$(ROUTER_M16_OBJ_$(1)) | $(SSTRIP)
	$$(TINY_CC_$(1)) $$(TINY_ARCH_$(1)) $$(TINY_LDFLAGS) \
	    -Wl,-Map,$$(ROUTER_M16_DIR_$(1))/pith-router.map -o $$@ $$^ -lgcc
	@$$(TINY_OBJCOPY_$(1)) -R .comment $$@
	@$(SSTRIP) $$@
cross-router-mips16e-$(1): $$(ROUTER_M16_DIR_$(1))/pith-router
endef
$(foreach a,mips mipsel,$(eval $(call router_m16_rules,$(a))))

ifeq ($(PROFILE),router)
tiny: pith-router
cross: $(addprefix cross-router-,$(TINY_CROSS))
else
tiny: pith-tiny
cross: $(addprefix cross-,$(TINY_CROSS))
endif
router: pith-router

# The router profile's tests: the differential test against the full build,
# its own command line, and the black-box files of what it has, against
# pith-router (the tests of what it leaves out are marked full_only or
# router_lacks and skip with the reason).
ROUTER_TEST_FILES = tests/test_router_diff.py tests/test_router_cli.py tests/test_router_regress_36.py \
                    tests/test_parser.py \
                    tests/test_paths.py tests/test_range.py tests/test_conditional.py \
                    tests/test_methods.py tests/test_keepalive.py tests/test_dotfiles.py \
                    tests/test_headers.py tests/test_mime.py tests/test_directories.py \
                    tests/test_timeouts.py tests/test_network.py tests/test_robustness.py \
                    tests/test_gap_limits.py tests/test_gap_path_max.py \
                    tests/test_pipeline_pressure.py tests/test_regress_location_backslash.py \
                    tests/test_regress_peer_address.py tests/test_cache.py \
                    $(foreach n,1 2 3 5 6 7 8 11 12,tests/test_regress_8_$(n).py)
test-router: pith pith-router
	PITH_BIN=$(CURDIR)/pith-router $(PYTEST) $(ROUTER_TEST_FILES)

# The differential test against each cross-built router under qemu-user, and
# the idle worker's memory budget on mips and mipsel (issue 36).
test-router-cross: pith $(addprefix cross-router-,$(TINY_CROSS)) cross-router-mips16e-mips \
                   cross-router-mips16e-mipsel
	@set -e; for a in $(TINY_CROSS); do echo "router $$a (qemu-$$a):"; \
	    PITH_ROUTER_CMD="qemu-$$a build/router-$$a/pith-router" $(PYTEST) -n 0 tests/test_router_diff.py; done
	@set -e; for a in mips mipsel; do echo "router MIPS16e $$a (qemu-$$a):"; \
	    PITH_ROUTER_CMD="qemu-$$a build/router-mips16e-$$a/pith-router" $(PYTEST) -n 0 tests/test_router_diff.py; done
	@set -e; for b in router-mips router-mipsel router-mips16e-mips router-mips16e-mipsel; do \
	    echo "$$b: the idle worker's memory budget (issue 36)"; \
	    PITH_BIN=$(CURDIR)/pith-router PITH_ROUTER_CMD="qemu-$${b##*-} build/$$b/pith-router" \
	    $(PYTEST) -n 0 tests/test_router_regress_36.py -k budget; done

# The whole suite against pith-tiny (epoll); tests of what it leaves out are
# marked full_only and skip with their reason (tests/skips_allowed.txt).
test-tiny: pith-tiny build/tiny/pith-tiny-testhook
	PITH_IO=epoll PITH_BIN=$(CURDIR)/pith-tiny $(PYTEST) tests

# The cross smoke: each cross-built pith-tiny under qemu-user.
# One process (-n 0): the servers under qemu and the 100 MiB file are made
# once per architecture for the whole module.
test-cross: pith-tiny cross
	PITH_CROSS=1 PITH_BIN=$(CURDIR)/pith-tiny $(PYTEST) -n 0 tests/test_tiny_cross.py

# The aarch64 pith-tiny under a real arm64 kernel with its sandbox on, and the
# aarch64 pith-router (no sandbox in that profile) answering the same requests:
# Debian's arm64 cloud kernel in qemu-system-aarch64 (scripts/qemu-arm64-run
# fetches it and busybox once, into build/arm64-guest/), one boot, about 10 s.
test-arm64-kernel: cross-aarch64 build/tiny-aarch64/pith-tiny-testhook cross-router-aarch64
	PITH_ARM64_KERNEL=1 $(PYTEST) -n 0 tests/test_tiny_arm64_kernel.py

# Each architecture's stripped size against its budget, and where the bytes go.
size-tiny: pith-tiny $(addprefix cross-,$(TINY_CROSS)) pith-router \
           $(addprefix cross-router-,$(TINY_CROSS)) cross-router-mips16e-mips cross-router-mips16e-mipsel
	scripts/tiny-size --modules x86_64 --groups x86_64 --groups mips

# --- libFuzzer targets ----------------------------------------------------------------
FUZZ_BINS = $(patsubst %,build/fuzz/fuzz_%,$(FUZZ_NAMES))
build/fuzz/fuzz_%: fuzz/fuzz_%.c $(CORE_SRC) $(wildcard fuzz/ref/*.c) $(wildcard src/core/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS_ALL) -Ifuzz $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined \
	    -fno-sanitize-recover=all -o $@ $< $(CORE_SRC) $(wildcard fuzz/ref/*.c)
# fuzz_h2 (issue 20) drives the HTTP/2 glue through a worker of its own
# (fuzz/fuzz_h2.c): the server layer and the CLI's option parser, compiled
# once each under build/fuzzlib/ (instrumented for libFuzzer, ASan, UBSan)
# rather than inside the target's one command, so that -j spreads them;
# the io_uring backend, the worker process, the master, the status listener
# and main are left out (the fuzz loop stands in for the first three, the
# target for main).
FUZZ_H2_SRC = $(CORE_SRC) $(SYS_SRC) \
              $(filter-out src/event/loop_uring%.c \
                src/process/worker.c src/process/master.c src/process/status.c,$(SERVER_SRC)) \
              $(CONFIG_SRC) src/cli/usage.c \
              src/acme/acme_shared.c src/testhook/none.c
FUZZ_H2_SRC += $(H3_SRC) # the worker calls HTTP/3's entry points (none run: no --tls-cert)
FUZZ_H2_OBJ = $(patsubst src/%.c,build/fuzzlib/%.o,$(FUZZ_H2_SRC))
# PITH_ASAN=1: the pools poison their free slots, as in pith-asan, so a
# write past a stream's or a connection's slot, or into one given back, traps.
FUZZ_SAN = -fsanitize=address,undefined -fno-sanitize-recover=all -DPITH_ASAN=1
build/fuzzlib/%.o: src/%.c
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS_ALL) $(CSTD) $(WARN) -g -O1 -MMD -MP -fsanitize=fuzzer-no-link $(FUZZ_SAN) \
	    -c $< -o $@
build/fuzz/fuzz_h2: fuzz/fuzz_h2.c $(FUZZ_H2_OBJ)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS_ALL) $(CSTD) $(WARN) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< \
	    $(FUZZ_H2_OBJ) -lnghttp2 -lssl -lcrypto -lcrypt $(H3_LIBS)
# fuzz_h3 (issue 34) drives the HTTP/3 glue the same way: datagrams to a
# worker's QUIC socket from an in-process client (fuzz/fuzz_h3.c), over the
# same objects.
build/fuzz/fuzz_h3: fuzz/fuzz_h3.c $(FUZZ_H2_OBJ)
	@mkdir -p $(@D)
	$(CLANG) $(CPPFLAGS_ALL) $(CSTD) $(WARN) -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -o $@ $< \
	    $(FUZZ_H2_OBJ) -lnghttp2 -lssl -lcrypto -lcrypt $(H3_LIBS)
fuzz: $(FUZZ_BINS)

# Each target runs FUZZ_SECONDS from the checked-in seeds (with fuzz/NAME.dict
# where there is one, else fuzz/http.dict); new inputs go to a
# scratch corpus under build/ so the tree stays clean.
fuzz-smoke: $(patsubst %,fuzz-smoke-%,$(FUZZ_NAMES))
fuzz-smoke-%: build/fuzz/fuzz_%
	@rm -rf build/fuzz/corpus_$*; mkdir -p build/fuzz/corpus_$*
	@echo "fuzz-smoke: $* for $(FUZZ_SECONDS) s"
	@build/fuzz/fuzz_$* -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
	    -dict=$(or $(wildcard fuzz/$*.dict),fuzz/http.dict) -artifact_prefix=build/fuzz/$*- build/fuzz/corpus_$* fuzz/corpus/$* \
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
# TEST_JOBS pytest-xdist processes run each pass: most of a test's time is
# spent waiting on the server (timeouts, drains, slow clients), so 4 of them
# share 2 cores well; every test starts its own server on its own port.
# TEST_JOBS=0 runs a pass in one process.
TEST_JOBS ?= 4
# --dist loadgroup: tests marked with one xdist_group run on one worker
# (test_tls_ktls_uml.py's: one user-mode Linux boot per pass, not one per
# worker); the others are shared out as with the default.
PYTEST = $(PYTHON) -m pytest -q -rs -p no:cacheprovider -n $(TEST_JOBS) \
         $(if $(filter 0,$(TEST_JOBS)),,--dist loadgroup)
test: pith pith-testhook $(H3_CLIENT)
	PITH_IO=epoll PITH_BIN=$(CURDIR)/pith $(PYTEST) tests
	PITH_IO=uring PITH_BIN=$(CURDIR)/pith $(PYTEST) tests

# The black-box files below run once more over HTTPS, on both loops
# (PITH_TLS=1: the fixture adds a throwaway certificate, tests/http_raw.py
# wraps its connections in TLS; see tests/conftest.py). Tests that need a
# plain socket by their nature are deselected. tests/test_tls_*.py run in
# every pass of `make test` and `make test-asan`.
TLS_TEST_FILES = test_parser.py test_methods.py test_headers.py test_range.py \
                 test_conditional.py test_paths.py test_dotfiles.py test_symlinks.py \
                 test_regress_location_backslash.py test_robustness.py \
                 test_keepalive.py
TLS_DESELECT   = --deselect tests/test_robustness.py::test_max_conns_limit
# The deadlines over TLS (header, keep-alive, send after a handshake) are the
# worker's timers, the same on both loops: once is enough (19 s).
TLS_TEST_FILES_ONCE = test_timeouts.py
test-tls: pith
	PITH_TLS=1 PITH_IO=epoll PITH_BIN=$(CURDIR)/pith $(PYTEST) \
	    $(addprefix tests/,$(TLS_TEST_FILES) $(TLS_TEST_FILES_ONCE)) $(TLS_DESELECT)
	PITH_TLS=1 PITH_IO=uring PITH_BIN=$(CURDIR)/pith $(PYTEST) $(addprefix tests/,$(TLS_TEST_FILES)) $(TLS_DESELECT)

# The black-box files below run once more over HTTP/2 (PITH_H2=1: the
# fixture's request helpers speak HTTP/2 through tests/h2_adapter.py and
# hand back the same Response objects, checked by RFC 9113's rules; see
# tests/conftest.py): the files whose subject is HTTP's semantics (files,
# Range, conditionals, variants, paths, site features, errors), h2c by
# prior knowledge and TLS with ALPN h2. What has no HTTP/2 form (raw bytes,
# pipelining) is marked h1_only and skips there.
H2_TEST_FILES = test_range.py test_conditional.py test_precomp_negotiation.py \
                test_site_features.py test_directories.py test_dotfiles.py test_mime.py \
                test_paths.py test_methods.py test_headers.py
H2_PASSES = epoll: epoll:tls uring: uring:tls
test-h2: pith
	@set -e; for p in $(H2_PASSES); do io=$${p%%:*}; tls=$${p#*:}; \
	    echo "test-h2: $$io, $${tls:-h2c}"; \
	    PITH_H2=1 PITH_TLS=$$([ -n "$$tls" ] && echo 1) PITH_IO=$$io PITH_BIN=$(CURDIR)/pith \
	        $(PYTEST) $(addprefix tests/,$(H2_TEST_FILES)); done

# The black-box files of H2_TEST_FILES run over HTTP/3 too (PITH_H3=1: the
# fixture's request helpers speak HTTP/3 through tests/h3_adapter.py and
# build/h3client, checked by RFC 9114's rules; see tests/conftest.py), on
# both loops; test-asan runs them once more under pith-asan.
H3_PASSES = epoll uring
ifeq ($(HTTP3),yes)
test-h3: pith build/h3client
	@set -e; for io in $(H3_PASSES); do echo "test-h3: $$io"; \
	    PITH_H3=1 PITH_IO=$$io PITH_BIN=$(CURDIR)/pith $(PYTEST) $(addprefix tests/,$(H2_TEST_FILES)); done
H3_ASAN = PITH_H3=1 PITH_IO=epoll PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) $(addprefix tests/,$(H2_TEST_FILES))
else
test-h3:
	@echo "test-h3: this build has no HTTP/3 (HTTP3=no)"
H3_ASAN = true
endif

# build/h3client (tests/h3client.c): an HTTP/3 client over ngtcp2 and
# nghttp3 for the tests (h3_adapter.py, the hostile peers) and the bench's
# load; not part of pith.
build/h3client: tests/h3client.c
	@mkdir -p build
	$(CC) $(CSTD) $(WARN) $(OPT) $(shell $(PKG_CONFIG) --cflags '$(H3_PKGS)') -o $@ $< $(H3_LIBS)

test-asan: pith-asan $(H3_CLIENT)
	PITH_IO=epoll PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) tests
	PITH_IO=uring PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) tests
	PITH_H2=1 PITH_IO=uring PITH_BIN=$(CURDIR)/pith-asan $(PYTEST) $(addprefix tests/,$(H2_TEST_FILES))
	$(H3_ASAN)

# The steps run in this order even under `make -j check`: the builds (and
# the unit tests) may run side by side, but the pytest passes have timing
# assertions (timeouts, slowloris, drain) and must not share the CPUs with
# each other or with the fuzzers, which keep a core busy for FUZZ_SECONDS
# each. So the passes run one after another, and fuzz-smoke after them, its
# targets two at a time (one per core). scripts/deps first installs (as root)
# or names (otherwise) the Debian packages all this needs.
STEP = scripts/step
check:
	scripts/deps check
	$(STEP) build $(MAKE) -j2 all pith-testhook core-freestanding unit asan fuzz tiny build/tiny/pith-tiny-testhook cross router
	$(STEP) test $(MAKE) test
	$(STEP) test-tls $(MAKE) test-tls
	$(STEP) test-h2 $(MAKE) test-h2
	$(STEP) test-h3 $(MAKE) test-h3
	$(STEP) test-asan $(MAKE) test-asan
	$(STEP) package-check $(MAKE) package-check
	$(STEP) test-tiny $(MAKE) test-tiny
	$(STEP) test-router $(MAKE) test-router
	$(STEP) test-cross $(MAKE) test-cross
	$(STEP) test-router-cross $(MAKE) test-router-cross
	$(STEP) test-arm64-kernel $(MAKE) test-arm64-kernel
	$(STEP) size-tiny $(MAKE) size-tiny
	$(STEP) test-testssl $(MAKE) test-testssl
	$(STEP) fuzz-smoke $(MAKE) -j2 fuzz-smoke
	$(STEP) format-check $(MAKE) format-check
	$(STEP) rooms scripts/rooms
	@echo "make check: all passed"

# --- HTTPS test rigs (issue 10) -----------------------------------------------------------
# test-ktls: kernel TLS verified inside a user-mode Linux guest (scripts/uml-run),
# both event loops in one boot. One boot per pytest pass, not per xdist worker (its
# tests share an xdist_group, and a lock in its fixture). `make test` already runs that module once per
# loop (the ASan passes skip it: tests/skips_allowed.txt), so check has no step
# of its own for it. test-testssl: testssl.sh scans pith's TLS port; the policy
# does not depend on the loop or the build, so check runs it once, after the
# pytest passes (tests/tls_testssl_scan.py is not named test_*.py for that).
.PHONY: test-ktls test-testssl
test-ktls: pith
	PITH_IO= PITH_BIN=$(CURDIR)/pith $(PYTEST) tests/test_tls_ktls_uml.py
# One process (-n 0): the module's fixture runs both scans side by side once;
# under xdist each worker would run its own pair, twice the work for nothing.
test-testssl: pith
	PITH_IO= PITH_BIN=$(CURDIR)/pith $(PYTEST) -n 0 tests/tls_testssl_scan.py

# --- style --------------------------------------------------------------------------------
FORMAT_FILES = $(sort $(wildcard src/*/*.[ch] src/sys/arch/arch.h tests/unit/*.[ch] tests/h3client.c fuzz/*.c fuzz/ref/*.[ch] bench/*.c))
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

# The HTTP/2 matrix's floor: nghttp2 and OpenSSL, nothing of pith's.
build/bench/donothing_h2: bench/donothing_h2.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 -O2 -g -Wall -Wextra -Werror -o $@ $< -lnghttp2 -lssl -lcrypto

# What the --status counters cost per request (ns), the real stats_request()
# linked from the full build's objects; a figure, never pass/fail.
build/bench/stats_cost: bench/stats_cost.c $(filter-out build/full/cli/%,$(FULL_OBJ))
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) -o $@ $^ $(FULL_LIBS) $(LDFLAGS)
bench-stats: build/bench/stats_cost
	build/bench/stats_cost

# Figures, never pass/fail: see bench/run --help. BENCH_ARGS=--repeats 1 ...
# (--quick: a few seconds). The plain matrix has a pith-router column (issue 21);
# the HTTPS matrix (bench/results/RESULTS-https.md), the HTTP/2 one
# (RESULTS-h2.md: h2load over TLS and h2c, issue 20) and, where the build has
# HTTP/3, the HTTP/3 one (RESULTS-h3.md: build/h3client against pith on both
# loops, gtlsserver and pith's HTTP/2 over TLS, issue 34) follow it.
bench: pith pith-router build/bench/donothing build/bench/donothing_h2 $(H3_CLIENT)
	bench/run $(BENCH_ARGS)
	bench/run --https $(BENCH_ARGS)
	bench/run --h2 $(BENCH_ARGS)
	$(if $(H3_CLIENT),bench/run --h3 $(BENCH_ARGS))
	bench/compress $(BENCH_COMPRESS_ARGS)

# Precompression figures alone (issue 11): see bench/compress --help;
# BENCH_COMPRESS_ARGS=--quick for a one-minute run.
bench-compress: pith
	bench/compress $(BENCH_COMPRESS_ARGS)

# Mutation campaign over src/core and the server rooms, on a private copy of the tree
# (an hour or more; never part of check): see scripts/mutate --help. The report
# goes to build/mutate/report.md; MUTATE_ARGS=--list shows the mutants.
# MUTATE_ARGS="--site tls-write,status,sandbox,ready" runs the named sites alone,
# each against its own test files (minutes).
mutate:
	nice -n 15 scripts/mutate $(MUTATE_ARGS)

# --- install (issue 13): the binary, the man page, the systemd units ----------------
# PREFIX (default /usr/local) and DESTDIR as usual; SYSTEMDUNITDIR where the
# units go (Debian's package sets /lib/systemd/system). The service's
# ExecStart is rewritten to name the installed binary.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The configuration (issue 22): SYSCONFDIR/pith/pith.conf, which the unit
# names; an existing one is never replaced (Debian's package sets /etc and
# dpkg keeps it as a conffile).
SYSCONFDIR ?= $(PREFIX)/etc
.PHONY: install uninstall deb package-check
install: pith
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(SYSTEMDUNITDIR) \
	    $(DESTDIR)$(SYSCONFDIR)/pith/sites-enabled
	install -m 0755 pith $(DESTDIR)$(BINDIR)/pith
	install -m 0644 docs/pith.1 $(DESTDIR)$(MANDIR)/man1/pith.1
	sed -e 's|/usr/bin/pith|$(BINDIR)/pith|g' -e 's|/etc/pith/|$(SYSCONFDIR)/pith/|g' \
	    dist/systemd/pith.service > $(DESTDIR)$(SYSTEMDUNITDIR)/pith.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/pith.service
	install -m 0644 dist/systemd/pith.socket $(DESTDIR)$(SYSTEMDUNITDIR)/pith.socket
	test -e $(DESTDIR)$(SYSCONFDIR)/pith/pith.conf || \
	    install -m 0644 dist/pith.conf $(DESTDIR)$(SYSCONFDIR)/pith/pith.conf
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/pith $(DESTDIR)$(MANDIR)/man1/pith.1 \
	    $(DESTDIR)$(SYSTEMDUNITDIR)/pith.service $(DESTDIR)$(SYSTEMDUNITDIR)/pith.socket
	-rmdir $(DESTDIR)$(SYSCONFDIR)/pith/sites-enabled 2>/dev/null
	@echo "uninstall: $(DESTDIR)$(SYSCONFDIR)/pith/pith.conf is kept (your configuration)"

# The Debian package, built from a copy of the tree under build/deb/ (the
# package build cleans its tree): build/deb/pith_<version>_<arch>.deb.
deb:
	scripts/build-deb

# Builds the package, runs lintian on it, installs it (dpkg -i when root,
# and dpkg -x always) and runs the installed binary: tests/package_check.py.
package-check:
	$(PYTEST) tests/package_check.py

clean:
	rm -rf build pith pith-asan pith-testhook pith-tiny pith-router

-include $(shell find build -name '*.d' 2>/dev/null)
