# The two set-up commands of the README: `make run` and `make test`.
.PHONY: deps build run test lint bench docs

deps:
	@scripts/install-deps.sh

build: deps
	swift build

# Builds Rivulet and runs something real offline (see README.md).
run: deps
	Benchmarks/run.sh w1

# Every test: the runtime's virtual-time tests and the command-line tests.
test: deps
	swift build --build-tests
	swift test --skip-build --disable-swift-testing

lint:
	swift format lint --strict --recursive Sources Core/Sources Tests Benchmarks/Sources

bench:
	Benchmarks/run.sh w1

# Regenerates the component reference from the component specs.
docs: build
	.build/debug/rivulet components --format markdown > docs/components.md
