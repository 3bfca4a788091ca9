#!/usr/bin/env bash
# Installs the system packages Rivulet builds against (libyaml, libxml2, SQLite, the NATS C client,
# PostgreSQL's libpq, pkg-config) and, unless the argument is `build`, those its tests use too
# (SQLite's shell, the NATS server, a PostgreSQL server, curl, jq, tmux, headless Chromium and
# chromedriver for the browser tests), only if
# one is missing. Safe to run again. `make run` asks for `build`; `make test` and CI for all;
# `Benchmarks/run.sh` for `bench` (the build packages and simdjson, for the reference loops).
set -euo pipefail
needed=(libyaml-dev libxml2-dev libsqlite3-dev libnats-dev libpq-dev pkg-config)
if [ "${1:-all}" = "bench" ]; then
  needed+=(libsimdjson-dev jq)
elif [ "${1:-all}" != "build" ]; then
  needed+=(sqlite3 nats-server postgresql curl jq tmux chromium chromium-driver)
fi
missing=()
for package in "${needed[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
# Another apt (an unattended upgrade) holding the package manager's lock is waited for, up to
# ten minutes, rather than failing the set-up.
wait_for_lock=(-o DPkg::Lock::Timeout=600)
$sudo_cmd apt-get "${wait_for_lock[@]}" update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get "${wait_for_lock[@]}" install -y -qq "${missing[@]}"
