# The two set-up commands of the README: `make run` and `make test`.
.PHONY: deps build-deps build run test lint bench docs plugin-api fuzz install

deps:
	@scripts/install-deps.sh

# What building and running need, without the test-only packages (a browser, a NATS server).
build-deps:
	@scripts/install-deps.sh build

build: deps
	swift build

# Builds Rivulet and runs a pipeline offline: the featured carousel, read from its fixture, in a table.
run: build-deps
	@scripts/quiet-build.sh .build/make-run.log swift build --product rivulet-engine
	@scripts/quiet-build.sh .build/make-run.log swift build --product rivulet
	.build/debug/rivulet run Pipelines/carousel.yaml

# Every test: the runtime's virtual-time tests and the command-line tests.
test: deps
	@# The example plugin is built again from empty when the core's binary interface changed: an
	@# incremental build would keep the old identifier (and inlined code) in its files.
	@cmp -s Core/Sources/PluginAPI/BinaryInterface.swift Examples/TextPlugin/.build/interface.stamp \
		|| rm -rf Examples/TextPlugin/.build
	swift build --package-path Examples/TextPlugin
	cp Core/Sources/PluginAPI/BinaryInterface.swift Examples/TextPlugin/.build/interface.stamp
	swift test --package-path Examples/TextPlugin --disable-swift-testing
	swift build --build-tests
	scripts/test.sh

# A release build of rivulet, installed under PREFIX (default ~/.local): PREFIX/bin/rivulet.
PREFIX ?= $(HOME)/.local
install: deps
	swift build -c release --product rivulet-engine
	swift build -c release --product rivulet
	scripts/install.sh .build/release $(PREFIX)

lint:
	swift format lint --strict --recursive Sources Core/Sources Tests Plugins Benchmarks/Sources Examples/TextPlugin/Sources Examples/TextPlugin/Tests

bench:
	Benchmarks/run.sh w1

# Fuzzes every parser a file or a server reaches (libFuzzer), FUZZ_SECONDS each (default 60); a crash
# is saved under Tests/Fuzz/Regressions/ and replayed by the tests once committed.
FUZZ_SECONDS ?= 60
fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

# Records the plugin API's public surface in Core/PluginAPI.digest and its binary interface's
# identifier in Core/Sources/PluginAPI/BinaryInterface.swift; CI fails while either is out of date.
plugin-api:
	swift build
	scripts/plugin-api.py update

# Regenerates the component reference from the component specs.
docs: build
	.build/debug/rivulet components --format markdown > docs/components.md
