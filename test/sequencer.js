// Orders the suites for the workers: the longest first (seconds measured in test/suite-seconds.json,
// refreshed with `node test/support/suite-seconds.js <jest --json output>`), so two workers end
// together; the canary scan always last, as it must see what every other suite wrote.
const { readFileSync } = require('node:fs');
const { join, relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

const root = join(__dirname, '..');
let seconds = {};
try {
  seconds = JSON.parse(readFileSync(join(__dirname, 'suite-seconds.json'), 'utf8'));
} catch {
  // no measurements yet: by name
}
// A suite not measured yet may be long: it goes before the measured ones of under a minute.
const UNMEASURED = 60;

class LongestFirstCanaryLastSequencer extends Sequencer {
  sort(tests) {
    const cost = (t) => seconds[relative(root, t.path)] ?? UNMEASURED;
    const sorted = [...tests].sort((a, b) => cost(b) - cost(a) || a.path.localeCompare(b.path));
    const isCanary = (t) => t.path.includes('/canary/');
    return [...sorted.filter((t) => !isCanary(t)), ...sorted.filter(isCanary)];
  }
}

module.exports = LongestFirstCanaryLastSequencer;
