# qtune — top-level entry points. `make demo` and `make test` each do all set-up
# (Debian packages, configure, build) on a fresh Debian 12 machine.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps configure build build-cli test demo format format-check sanitize tsan clean

all: build

deps:
	@bash scripts/install_deps.sh

configure: deps
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS) > /dev/null

build: configure
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Only the `qtune` binary (what examples/demo.sh runs), not the test suite.
build-cli: configure
	@cmake --build $(BUILD_DIR) --target qtune -j $(JOBS)

test: build
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

demo: build-cli
	@bash examples/demo.sh $(BUILD_DIR)

# ASan + UBSan build of everything (runtime included; oneDNN is not instrumented) in
# build-asan/, at -O1 -g1: line tables for the sanitizers' stack traces, and a build about
# twice as fast as -O2 -g (the sanitized build is compile-bound on 2 cores; the heavy
# kernels are oneDNN's, which -O1 does not touch). Runs the unit, kernel and fuzz labels
# (corpus replay plus 30 s of mutation per target), then every e2e test (runtime, interop,
# quant, autotune, tune, workers, cli, api; the Python module is not built here, and
# packaging's install test is left out: it builds a consumer project, not qtune code).
# A report fails the test (UBSan is built not to recover). oneDNN is capped below AMX
# (ONEDNN_MAX_CPU_ISA): its uninstrumented AMX int8 convolution reads past the end of a
# heap block, which ASan's allocator places at a page end. See docs/fuzzing.md.
SANITIZE_ENV = UBSAN_OPTIONS=print_stacktrace=1 ONEDNN_MAX_CPU_ISA=AVX512_CORE_BF16
sanitize:
	@$(MAKE) --no-print-directory configure BUILD_DIR=build-asan BUILD_TYPE=RelWithDebInfo \
	  CMAKE_FLAGS="-DQTUNE_SANITIZE=ON -DQTUNE_BUILD_PYTHON=OFF -DQTUNE_BUILD_BENCHMARKS=OFF \
	  '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG'"
	@cmake --build build-asan -j $(JOBS)
	@cd build-asan && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -L 'unit|kernel|fuzz'
	@cd build-asan && $(SANITIZE_ENV) ctest --output-on-failure -j $(JOBS) -L e2e -E '^packaging\.'

# ThreadSanitizer build of the runtime; runs the concurrency tests (sessions with different
# thread counts on two threads, one session shared by two threads). A report fails them.
# oneDNN and libgomp are not instrumented: races inside them are not seen.
tsan:
	@$(MAKE) --no-print-directory configure BUILD_DIR=build-tsan BUILD_TYPE=RelWithDebInfo \
	  CMAKE_FLAGS="-DQTUNE_SANITIZE_THREAD=ON -DQTUNE_BUILD_PYTHON=OFF -DQTUNE_BUILD_BENCHMARKS=OFF"
	@cmake --build build-tsan --target concurrency_test -j $(JOBS)
	@cd build-tsan && ctest --output-on-failure -R concurrency_test

format:
	@git ls-files '*.h' '*.cc' | xargs clang-format -i

format-check:
	@git ls-files '*.h' '*.cc' | xargs clang-format --dry-run --Werror

clean:
	@rm -rf $(BUILD_DIR) build-asan
