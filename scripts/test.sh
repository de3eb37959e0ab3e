#!/usr/bin/env bash
# The whole test suite, from a fresh clone: installs what it needs, builds, lints, then runs every
# layer (unit → fuzz → netns → vm → e2e) and ends with one "N passed, N failed" line over all of them.
# LVSD_TEST_LAYERS="unit netns" limits the layers (for the inner loop).
set -uo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s\n' "$*"; }

step "Debian packages"
bash scripts/install-deps.sh || exit 1

step "npm packages"
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund || exit 1
fi

step "build"
npm run --silent build || exit 1

step "lint"
npx eslint . || exit 1

# fuzz: bounded by LVSD_FUZZ_N / LVSD_FUZZ_SECONDS (test/support/fuzz-text.ts)
layers=${LVSD_TEST_LAYERS:-unit fuzz netns vm e2e}
total_pass=0 total_fail=0 status=0
mkdir -p test-artifacts
for layer in $layers; do
  dir=dist/test/$layer
  if ! compgen -G "$dir/*.test.js" >/dev/null; then
    echo "layer $layer: no tests yet ($dir is empty)"; continue
  fi
  step "layer: $layer"
  # Integration layers share namespaces, CPUs and timing: one file at a time.
  concurrency=1; [[ $layer == unit || $layer == fuzz ]] && concurrency=2
  log=test-artifacts/$layer.tap
  node --test --test-reporter=tap --test-concurrency=$concurrency "$dir"/*.test.js | tee "$log"
  rc=${PIPESTATUS[0]}
  pass=$(grep -E '^# pass ' "$log" | tail -1 | awk '{print $3}')
  fail=$(grep -E '^# fail ' "$log" | tail -1 | awk '{print $3}')
  total_pass=$((total_pass + ${pass:-0})); total_fail=$((total_fail + ${fail:-0}))
  ((rc == 0)) || status=1
done

echo
echo "${total_pass} passed, ${total_fail} failed"
exit $status
