#!/usr/bin/env bash
# `npm start`: lvsd's main job on this machine, as a live HA lab. Installs and builds what is missing,
# then builds network namespaces with two lvsd directors, three nginx real servers and a client (lab/).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund
fi
npm run --silent build
exec node dist/lab/main.js
