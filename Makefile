# tessel - build, test, run, install.
#
#   make            build ./tessel, ./tessel.so (Lua module) and ./libtessel.a
#   make run        install dependencies, build, run scripts/tour.lua
#   make test       install dependencies, build, run every C, Lua and REPL test
#   make test SANITIZE=1   the same under AddressSanitizer and UBSan (in build/san)
#   make bench      run the benchmarks in bench/
#   make fuzz SECONDS=N    build the libFuzzer harnesses of fuzz/ with clang and run each N seconds,
#                          then the schedule tester fuzz/sched.lua N seconds (SCHED_SEED=S fixes its seed)
#   make install PREFIX=/usr/local

VERSION  = 0.1.0
PREFIX  ?= /usr/local
CC      ?= cc
PKGS     = lua5.4 readline cmocka libgvc libcgraph
# gcc: the C JIT (backends/jit.c) compiles kernels with cc at run time, -fopenmp included
DEBS     = liblua5.4-dev lua5.4 libreadline-dev libgraphviz-dev graphviz \
           libcmocka-dev pkg-config libxml2-utils gcc \
           pocl-opencl-icd ocl-icd-opencl-dev opencl-headers

PKG_CFLAGS := $(shell pkg-config --cflags lua5.4 2>/dev/null)
LUA_LIBS   := $(shell pkg-config --libs lua5.4 2>/dev/null)
RL_LIBS    := $(shell pkg-config --libs readline 2>/dev/null || echo -lreadline)
CMOCKA_LIBS:= $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)
# Graphviz (viz/gv.c): tessel, tessel.so and every user of libtessel.a link these.
GV_LIBS    := $(shell pkg-config --libs libgvc libcgraph 2>/dev/null || echo -lgvc -lcgraph -lcdt)
# The C JIT (backends/jit.c) loads what it compiles: dlopen is in libc from glibc 2.34, in libdl before.
DL_LIBS    = -ldl

CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -Werror -Wno-unused-parameter
DEFS     = -D_POSIX_C_SOURCE=200809L -DTESSEL_VERSION='"$(VERSION)"'
ALL_CFLAGS = $(WARN) $(DEFS) $(CFLAGS) -fPIC -MMD -MP $(PKG_CFLAGS)

ifeq ($(SANITIZE),1)
  B        = build/san
  SANFLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  ALL_CFLAGS += $(SANFLAGS) -O1
  LDSAN    = $(SANFLAGS)
  OUT      = $(B)
  # Graphviz 2.42 leaks a little per HTML label: tests/lsan.supp names those frames; the slow
  # unwinder sees through system libraries built without frame pointers, so the names match.
  export LSAN_OPTIONS = suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0
  # intercept_tls_get_addr=0: LeakSanitizer's exit scan crashed in its tracer on a stale
  # dynamic-TLS entry of the main thread (test_ops_backends.lua, after its checks passed), from
  # modules dlopened and dlclosed by the C JIT, PoCL and the CUDA libraries; each backend alone
  # passed. Without the interception the scan reads static TLS only.
  export ASAN_OPTIONS = fast_unwind_on_malloc=0:intercept_tls_get_addr=0
else
  B        = build
  OUT      = .
endif

# One line per room, in the dependency order of docs/architecture.md (lowest first). The core
# needs libc and Graphviz (viz/gv.c only); the Lua files need Lua.
ROOMS    = util interp/ir interp/tensor layout interp/kernel interp/sched interp/dist viz backends
CORE_SRC = $(foreach r,$(ROOMS),$(sort $(wildcard $(r)/*.c)))
# The headers `make install` puts under include/tessel/, each room's public one (their relative
# includes stay valid there).
PUBLIC_H = util/buf.h util/limits.h interp/ir/ops.h interp/ir/uop.h interp/ir/algebra.h interp/tensor/tensor.h layout/layout.h \
           layout/lower.h interp/kernel/kernel.h interp/sched/sched.h interp/sched/tile_ir.h interp/dist/dist.h viz/viz.h viz/gv.h \
           backends/backend.h
EXE_SRC  = repl/main.c repl/repl.c
LUA_SRC  = $(filter-out $(EXE_SRC),$(sort $(wildcard repl/*.c)))

CORE_OBJ = $(CORE_SRC:%.c=$(B)/%.o)
LUA_OBJ  = $(LUA_SRC:%.c=$(B)/%.o)
EXE_OBJ  = $(EXE_SRC:%.c=$(B)/%.o)

TESSEL   = $(OUT)/tessel
MODULE   = $(OUT)/tessel.so
LIB      = $(OUT)/libtessel.a

CTESTS   = $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c))
LUATESTS = $(sort $(wildcard tests/lua/test_*.lua))
# every script runs under the sanitizers too: scripts/gpu/gemm.lua and prefill.lua self-check
# their tensor-core kernels in the interpreter (35 s and 71 s there), and a sanitizer run of them
# found the wgmma tile reads' uninitialized order fields
SCRIPTS  = $(wildcard scripts/*.lua) $(wildcard scripts/gpu/*.lua)

.PHONY: all deps run test check check-deps bench install clean fuzz fuzz-deps fuzz-build fuzz-sched valgrind
all: $(TESSEL) $(MODULE) $(LIB)

# Install what is missing, quietly when nothing is (run as root on a fresh machine).
deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi
	@command -v tmux >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux >/dev/null; }

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(MODULE): $(CORE_OBJ) $(LUA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDSAN) -o $@ $^ $(GV_LIBS) $(DL_LIBS) -lm

$(TESSEL): $(EXE_OBJ) $(LUA_OBJ) $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $^ $(LUA_LIBS) $(RL_LIBS) $(GV_LIBS) $(DL_LIBS) -lm

$(B)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Wno-unused-function -o $@ $< $(LIB) $(LDSAN) $(CMOCKA_LIBS) $(GV_LIBS) $(DL_LIBS) -lm -lutil

run: deps all
	./tessel scripts/tour.lua
	@echo; ./tessel scripts/pictures.lua out 6

# Every test, stopping at the first failure.
test: deps
	@$(MAKE) --no-print-directory all
	@$(MAKE) --no-print-directory $(CTESTS)
	@$(MAKE) --no-print-directory check

check:
	@set -e; for t in $(CTESTS); do echo "== $$t"; $$t; done
	@set -e; for t in $(LUATESTS); do echo "== $$t"; $(TESSEL) $$t; done
	@set -e; for t in $(SCRIPTS); do echo "== $$t (runs without error)"; $(TESSEL) $$t >/dev/null; done
# Not under the sanitizers: the full-size GPU kernels' descriptor and tensor-map checks take
# 136 s there (20 s here); the scripts' self-checks run the same code small.
ifneq ($(SANITIZE),1)
	@echo "== bench/gpu/export.lua (every GPU case exports)"; $(TESSEL) bench/gpu/export.lua $(B)/gpu_export >/dev/null
	@echo "== make install: a C program against the installed headers and libtessel.a"; \
	  rm -rf $(B)/install && $(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(B)/install >/dev/null && \
	  $(CC) -std=c11 -Wall -Wextra -Werror -I$(B)/install$(PREFIX)/include -o $(B)/install/user tests/install_user.c \
	    $(B)/install$(PREFIX)/lib/libtessel.a $(GV_LIBS) $(DL_LIBS) -lm && $(B)/install/user
	@echo "== lua5.4 require 'tessel'"; \
	  LUA_CPATH="./?.so" lua5.4 -e 'local t = require "tessel"; assert(tostring(t.cute.layout("(4,2)")) == "(4,2):(1,4)"); print("ok")'
endif
	@echo "== check-deps (docs/architecture.md's dependency line, no loops, no file over 2,000 lines)"; \
	  lua5.4 tests/check_deps.lua $(B)
	@echo "== repl (tmux)"; TESSEL=$(TESSEL) sh tests/repl_test.sh
	@echo "== docs examples (every '> ' line of README.md and docs/*.md)"; $(TESSEL) tests/docs/run_examples.lua README.md docs/*.md
	@echo "all tests passed"

# The house's rules (tests/check_deps.lua): every include and call between rooms points down the
# dependency line of docs/architecture.md, no two files call or include each other in a loop,
# no source file outside tests/ is over 2,000 lines.
check-deps: deps all
	@lua5.4 tests/check_deps.lua $(B)

# REPL sessions of every module under memcheck (tests/valgrind.sh)
valgrind: deps all
	@command -v valgrind >/dev/null || apt-get install -y valgrind
	@TESSEL=$(TESSEL) sh tests/valgrind.sh

bench: all $(B)/bench/ptytime
	@sh bench/startup.sh $(B)/bench/ptytime ./tessel 100
	@./tessel bench/cute_bench.lua
	@./tessel bench/uop_bench.lua
	@./tessel bench/index_ops.lua
	@./tessel bench/viz_bench.lua
	@./tessel bench/tensor_eval.lua
	@./tessel bench/kernel_bench.lua
	@./tessel bench/backend_bench.lua

$(B)/bench/ptytime: bench/ptytime.c
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Werror -o $@ $< -lutil

# where a stock lua5.4 finds C modules for PREFIX=/usr/local or /usr
LUADIR = $(PREFIX)/lib/lua/5.4
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include/tessel/layout $(DESTDIR)$(PREFIX)/include/tessel/util \
	  $(DESTDIR)$(LUADIR) $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/tessel/scripts $(DESTDIR)$(PREFIX)/share/doc/tessel
	install -m 755 tessel $(DESTDIR)$(PREFIX)/bin/tessel
	install -m 644 libtessel.a $(DESTDIR)$(PREFIX)/lib/libtessel.a
	install -m 644 tessel.so $(DESTDIR)$(LUADIR)/tessel.so
	for h in $(PUBLIC_H); do install -D -m 644 $$h $(DESTDIR)$(PREFIX)/include/tessel/$$h; done
	install -m 644 docs/tessel.1 $(DESTDIR)$(PREFIX)/share/man/man1/tessel.1
	install -m 644 scripts/*.lua $(DESTDIR)$(PREFIX)/share/tessel/scripts
	for d in cpu gpu neptune; do install -D -m 644 -t $(DESTDIR)$(PREFIX)/share/tessel/scripts/$$d scripts/$$d/*.lua; done
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/tessel

clean:
	rm -rf build tessel tessel.so libtessel.a

# Fuzzing (fuzz/, docs/reliability.md): libFuzzer harnesses built by clang with ASan and UBSan
# in build/fuzz, a build of its own that `make` and `make test` never touch (they need no clang).
# `make fuzz SECONDS=N` runs each harness N seconds from its seed corpus and dictionary and
# fails on the first finding; findings land in build/fuzz/findings/.
FUZZ_CC    = clang
FUZZ_DEBS  = clang libclang-rt-dev llvm
FUZZ_B     = build/fuzz
FUZZ_SAN   = -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_CFLAGS = $(WARN) $(DEFS) -g -O1 -fPIC -MMD -MP $(PKG_CFLAGS) $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZERS    = cute tiler composed axe names lego lua_api
SECONDS   ?= 10
FUZZ_OBJ   = $(CORE_SRC:%.c=$(FUZZ_B)/%.o) $(LUA_SRC:%.c=$(FUZZ_B)/%.o)
FUZZ_BIN   = $(FUZZERS:%=$(FUZZ_B)/fuzz_%)

fuzz-deps:
	@missing=""; for p in $(FUZZ_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

$(FUZZ_B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -c $< -o $@

$(FUZZ_B)/fuzz_%: fuzz/%.c fuzz/fuzz.h fuzz/fuzz_lua.h $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) $(LUA_LIBS) $(GV_LIBS) -lm

fuzz-build: $(FUZZ_BIN)
.SECONDARY: $(FUZZ_OBJ)

fuzz: deps fuzz-deps all
	@$(MAKE) --no-print-directory fuzz-build
	@rc=0; sh fuzz/run.sh $(SECONDS) $(FUZZERS) || rc=1; { $(SCHED_RUN); } || rc=1; exit $$rc

# The schedule tester (fuzz/sched.lua, docs/reliability.md) on the normal build: random programs
# and schedule steps for SECONDS seconds. A crash kills tessel; the step that did it was written
# to build/fuzz/sched/current-SEED.lua first, and is shown. A hang is stopped 10 minutes past the time.
SCHED_SEED ?=
SCHED_RUN = mkdir -p $(FUZZ_B)/sched; \
  timeout $$(($(SECONDS) + 600)) $(TESSEL) fuzz/sched.lua $(SECONDS) $(SCHED_SEED); src=$$?; \
  if [ $$src -gt 1 ]; then \
    cur=$$(ls -t $(FUZZ_B)/sched/current-*.lua 2>/dev/null | head -n 1); \
    echo "fuzz sched: tessel died or hung (exit $$src) at this step ($$cur):"; \
    [ -z "$$cur" ] || cat "$$cur"; \
  fi; [ $$src -eq 0 ]
fuzz-sched: all
	@$(SCHED_RUN)

-include $(shell find build -name '*.d' 2>/dev/null)
