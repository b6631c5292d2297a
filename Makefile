# The two commands of the README, and a few more. Everything builds through CMake.
MAKEFLAGS += --no-print-directory
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
LISTEN ?= 127.0.0.1:8080
DB ?= var/evenodds.db

.PHONY: run build test bench fuzz clean

build:
	@scripts/deps.sh run
	cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEO_BENCH=OFF >/dev/null
	cmake --build build -j$(JOBS) --target evenodds evenodds-gamesim

# Starts the service on embedded SQLite; first start creates var/keys.env and the pool "default".
run: build
	@scripts/run.sh "$(DB)" "$(LISTEN)"

# Debug build with ASan+UBSan, then every test through CTest.
test:
	@scripts/deps.sh test
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DEO_SANITIZE=ON >/dev/null
	cmake --build build-test -j$(JOBS)
	cd build-test && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		ctest --output-on-failure -j$(JOBS)

# Release build of the benchmarks; bench/README.md says what each prints.
bench:
	@scripts/deps.sh bench
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build build-bench -j$(JOBS)

# libFuzzer binaries (clang) in build-fuzz/.
# Run one, e.g.: build-fuzz/fuzz/fuzz_round -max_total_time=60 NEW_DIR fuzz/corpus/round
# (a new directory first, so found inputs do not spill into the committed corpus).
fuzz:
	@scripts/deps.sh fuzz
	CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DEO_FUZZ=ON >/dev/null
	cmake --build build-fuzz -j$(JOBS)

clean:
	rm -rf build build-test build-bench build-fuzz
