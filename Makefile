# Entry points. Every target installs what it needs (scripts/setup.sh) and
# builds incrementally in $(BUILD).
BUILD ?= build
JOBS ?= $(shell nproc)
# ccache keys paths relative to the checkout, so that every clone (CI's
# included) reuses what another compiled.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true

.PHONY: all setup configure build demo test test-sanitize fuzz bench docs clean

all: build

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja: | setup
	cmake -G Ninja -S . -B $(BUILD) \
	  -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
	  -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
	  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
	  -DLLVM_DIR=/usr/lib/llvm-22/lib/cmake/llvm

configure: $(BUILD)/build.ninja

build: configure
	ninja -C $(BUILD) -j $(JOBS)

# Compile, package, simulate and check the SigLIP MLP GEMMs on ipu21.
demo: build
	@scripts/demo.sh $(BUILD)

# GoogleTest suites (through ctest) and lit tests, with one summary line.
test: build
	@scripts/test.sh $(BUILD)

# GoogleTest and lit suites built with ASan + UBSan (build-sanitize/).
test-sanitize: setup
	@scripts/test-sanitize.sh

# Each libFuzzer target for FUZZ_SECONDS (default 600) on the seeded corpus.
FUZZ_SECONDS ?= 600
fuzz: setup
	@scripts/fuzz.sh $(FUZZ_SECONDS)

bench: build
	@bench/run

# Regenerate docs/ from ODS.
docs: build
	ninja -C $(BUILD) ipu-docs

clean:
	rm -rf $(BUILD) build-sanitize
