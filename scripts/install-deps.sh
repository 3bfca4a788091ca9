#!/usr/bin/env bash
# Installs the system packages Rivulet builds against and its tests use (libyaml, libxml2, SQLite and
# its shell, the NATS C client and server, curl, pkg-config, jq, tmux, headless Chromium and
# chromedriver for the browser tests),
# only if one is missing. Safe to run again.
set -euo pipefail
needed=(libyaml-dev libxml2-dev libsqlite3-dev sqlite3 libnats-dev nats-server curl pkg-config jq tmux chromium chromium-driver)
missing=()
for package in "${needed[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}" >&2
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
$sudo_cmd apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
