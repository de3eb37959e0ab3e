#!/usr/bin/env bash
# `npm start`: lvsd's main job on this machine. Installs and builds what is missing, then runs lvsd
# with the example config in the foreground (Ctrl-C stops it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build
exec node dist/daemon/cli/main.js run --config config/lvsd.yaml --state "${LVSD_STATE:-/tmp/lvsd-state.json}"
