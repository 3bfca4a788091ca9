#!/usr/bin/env bash
# What to run before every commit: the style check and every test (the same as CI, minus the install).
set -euo pipefail
cd "$(dirname "$0")/.."
swift format lint --strict --recursive Sources Core/Sources Tests Benchmarks/Sources Examples/TextPlugin/Sources Examples/TextPlugin/Tests
# Built again from empty when the core's binary interface changed (see the Makefile's test target).
cmp -s Core/Sources/PluginAPI/BinaryInterface.swift Examples/TextPlugin/.build/interface.stamp \
  || rm -rf Examples/TextPlugin/.build
swift build --package-path Examples/TextPlugin
cp Core/Sources/PluginAPI/BinaryInterface.swift Examples/TextPlugin/.build/interface.stamp
swift test --package-path Examples/TextPlugin --disable-swift-testing > Examples/TextPlugin/.build/test.log 2>&1 || { grep -E "error:" Examples/TextPlugin/.build/test.log; exit 1; }
swift build --build-tests
swift test --skip-build --disable-swift-testing > .build/test.log 2>&1 || { grep -E "error:|failed \(" .build/test.log; exit 1; }
tail -3 .build/test.log
.build/debug/rivulet lint $(ls Pipelines/*.yaml | grep -v '\.test\.yaml$') >/dev/null
.build/debug/rivulet test Pipelines/ | tail -1
.build/debug/rivulet test Examples/TextPlugin Examples/ProcessPlugin | tail -1
