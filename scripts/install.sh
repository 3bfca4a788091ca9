#!/usr/bin/env bash
# Installs a built rivulet: scripts/install.sh BUILD_DIR PREFIX (make install does it for a release
# build). rivulet starts rivulet-engine from its own folder, which loads libRivuletCore.so from there
# (the library plugins share), so the three go to PREFIX/lib/rivulet and PREFIX/bin/rivulet is a
# link to the launcher there.
set -euo pipefail
build="${1:?usage: scripts/install.sh BUILD_DIR PREFIX}"
prefix="${2:?usage: scripts/install.sh BUILD_DIR PREFIX}"
for file in rivulet rivulet-engine libRivuletCore.so; do
  [ -f "$build/$file" ] || { echo "error: $build/$file is missing: build first (swift build -c release --product rivulet-engine; swift build -c release --product rivulet)" >&2; exit 2; }
done
mkdir -p "$prefix/lib/rivulet" "$prefix/bin"
install -m 755 "$build/rivulet" "$prefix/lib/rivulet/rivulet"
install -m 755 "$build/rivulet-engine" "$prefix/lib/rivulet/rivulet-engine"
install -m 644 "$build/libRivuletCore.so" "$prefix/lib/rivulet/libRivuletCore.so"
ln -sf "$prefix/lib/rivulet/rivulet" "$prefix/bin/rivulet"
echo "installed $prefix/bin/rivulet ($("$prefix/bin/rivulet" --version))"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "add it to your PATH: export PATH=\"$prefix/bin:\$PATH\"" ;;
esac
