// Runs the canary scan after every other integration suite, so it sees everything they wrote.
const Sequencer = require('@jest/test-sequencer').default;

class CanaryLastSequencer extends Sequencer {
  sort(tests) {
    const sorted = [...tests].sort((a, b) => a.path.localeCompare(b.path));
    const isCanary = (t) => t.path.includes('/canary/');
    return [...sorted.filter((t) => !isCanary(t)), ...sorted.filter(isCanary)];
  }
}

module.exports = CanaryLastSequencer;
