#!/usr/bin/env bash
# npm test: every suite CI runs, phase by phase, with each phase's duration printed at the end
# (and appended to TEST_PHASES_FILE when set, for .ci/run's summary).
#   build        tsc of the apps, the CLI, the scripts and the bench
#   unit         the specs beside the code (jest workers as many as the cores)
#   integration  the suites in test/ against the built apps, TEST_WORKERS (default 2) jest workers,
#                each with a database and Redis key prefix of its own
#   cluster      the queue suites again on a private three-master Redis Cluster
#   pooler       the sales suites again through a private PgBouncer in transaction mode
#   chaos        a short chaos run (npm run chaos -- --duration 90): the stack on private servers
#                under load and every fault once, its checks' table printed (CHAOS_SEED=<seed>
#                replays its schedule)
# One fast-check seed for the whole run (FC_SEED=<seed> npm test replays it).
set -euo pipefail
cd "$(dirname "$0")/.."

export FC_SEED="${FC_SEED:-$(node -e 'console.log(Math.floor(Math.random() * 2 ** 31) * (Math.random() < 0.5 ? -1 : 1))')}"
workers="${TEST_WORKERS:-2}"
summary=""
current=""
started=0

phase() {
  current="$1"
  started=$SECONDS
  printf '\n--> %s\n' "$current"
}
done_phase() {
  local line
  line="$(printf '%-12s %5ss' "$current" "$((SECONDS - started))")"
  summary+="${line}"$'\n'
  [ -z "${TEST_PHASES_FILE:-}" ] || echo "$line" >>"$TEST_PHASES_FILE"
  current=""
}
report() {
  local rc=$?
  if [ -n "$current" ]; then
    local line
    line="$(printf '%-12s %5ss  FAILED' "$current" "$((SECONDS - started))")"
    summary+="${line}"$'\n'
    [ -z "${TEST_PHASES_FILE:-}" ] || echo "$line" >>"$TEST_PHASES_FILE"
  fi
  printf '\nnpm test phases (FC_SEED=%s):\n%s' "$FC_SEED" "$summary"
  exit $rc
}
trap report EXIT

phase build
npm run -s build
done_phase

phase unit
npx jest --selectProjects unit
done_phase

phase integration
TEST_WORKERS="$workers" npx jest --selectProjects integration --maxWorkers="$workers" --forceExit
done_phase

phase cluster
npm run -s test:cluster:run
done_phase

phase pooler
npm run -s test:pooler:suites
done_phase

phase chaos
node dist/scripts/chaos/main.js --duration 90 --rate 10 --report test/.logs/chaos-report.json ${CHAOS_SEED:+--seed "$CHAOS_SEED"}
done_phase
