#!/usr/bin/env bash
# npm run test:long: the generated-history and race suites with many more runs than CI gives them
# (CI runs each from a fresh seed, so coverage grows run after run; this run looks much further in
# one go). Run it before a release, and before touching money operations, rebills, the vault's
# dedup or request validation. It takes about an hour on a 2-core machine. FC_SEED replays a run.
set -euo pipefail
cd "$(dirname "$0")/.."

export FC_SEED="${FC_SEED:-$(node -e 'console.log(Math.floor(Math.random() * 2 ** 31) * (Math.random() < 0.5 ? -1 : 1))')}"
export REBILL_MODEL_RUNS="${REBILL_MODEL_RUNS:-60}"
export MONEY_MODEL_RUNS="${MONEY_MODEL_RUNS:-500}"
export MONEY_RACE_RUNS="${MONEY_RACE_RUNS:-100}"
export FUZZ_BODIES="${FUZZ_BODIES:-100000}"
echo "test:long: FC_SEED=$FC_SEED REBILL_MODEL_RUNS=$REBILL_MODEL_RUNS MONEY_MODEL_RUNS=$MONEY_MODEL_RUNS MONEY_RACE_RUNS=$MONEY_RACE_RUNS FUZZ_BODIES=$FUZZ_BODIES"

npm run -s build
TEST_WORKERS=1 npx jest --selectProjects integration --runInBand --forceExit \
  test/rebills/rebill-model.e2e.test.ts test/sales/money-model.e2e.test.ts test/sales/money-operations.e2e.test.ts \
  test/requests/fuzz.e2e.test.ts test/tokens/fingerprint-dedup.e2e.test.ts test/canary
