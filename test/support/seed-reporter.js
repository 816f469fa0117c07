// Prints the run's fast-check seed when jest starts and, for every failed test whose message
// carries fast-check's "{ seed: …, path: … }", the one command that replays that counterexample.
const { relative } = require('node:path');

class SeedReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.replays = [];
  }

  onRunStart() {
    process.stdout.write(`\nfast-check seed of this run: FC_SEED=${process.env.FC_SEED}\n`);
  }

  onTestResult(test, result) {
    for (const t of result.testResults) {
      if (t.status !== 'failed') continue;
      const text = t.failureMessages.join('\n');
      const m = /seed: (-?\d+), path: "([0-9:]*)"/.exec(text);
      if (!m) continue;
      const file = relative(this.rootDir, test.path);
      // fc.commands histories also need their replayPath (the suites pass FC_REPLAY_PATH to it).
      const replay = /replayPath="([^"]+)"/.exec(text);
      const name = t.fullName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/'/g, "'\\''");
      this.replays.push(
        `  ${t.fullName}\n    FC_SEED=${m[1]} FC_PATH=${m[2]}${replay ? ` FC_REPLAY_PATH=${replay[1]}` : ''} npx jest ${file} --runInBand --forceExit -t '${name}'`,
      );
    }
  }

  onRunComplete() {
    if (!this.replays.length) return;
    process.stdout.write(`\nfast-check counterexamples to replay (seed ${process.env.FC_SEED}):\n${this.replays.join('\n')}\n`);
  }
}

module.exports = SeedReporter;
