#!/usr/bin/env bash
# Regenerates docs/images/live-view.png, the picture of `rivulet run --ui` in the README: runs the
# browser test (headless Chromium through chromedriver), which saves its screenshot there.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build --build-tests
mkdir -p docs/images
RIVULET_SCREENSHOT="$PWD/docs/images/live-view.png" swift test --skip-build --disable-swift-testing \
  --filter LiveViewTests.testTheLiveViewShowsTheGraphRatesElementsAndTables
