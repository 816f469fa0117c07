// Keeps one file per running suite in TEST_ACTIVE_DIR (set by jest.config.js), so that the canary
// scan, which the sequencer runs last, can wait for the suites still running in other workers.
const { createHash } = require('node:crypto');
const { mkdirSync, rmSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

const marker = (path) => join(process.env.TEST_ACTIVE_DIR, createHash('sha1').update(path).digest('hex'));

class ActiveSuitesReporter {
  onRunStart() {
    mkdirSync(process.env.TEST_ACTIVE_DIR, { recursive: true });
  }

  onTestStart(test) {
    writeFileSync(marker(test.path), test.path);
  }

  onTestResult(test) {
    rmSync(marker(test.path), { force: true });
  }

  onRunComplete() {
    rmSync(process.env.TEST_ACTIVE_DIR, { recursive: true, force: true });
  }
}

module.exports = ActiveSuitesReporter;
