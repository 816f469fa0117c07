// Refreshes test/suite-seconds.json (what test/sequencer.js orders the suites by) from the JSON
// results of an integration run: `npx jest --selectProjects integration --json --outputFile=r.json`
// then `node test/support/suite-seconds.js r.json`.
const { readFileSync, writeFileSync } = require('node:fs');
const { join, relative } = require('node:path');

const root = join(__dirname, '..', '..');
const file = join(root, 'test', 'suite-seconds.json');
const results = JSON.parse(readFileSync(process.argv[2], 'utf8'));
let seconds = {};
try {
  seconds = JSON.parse(readFileSync(file, 'utf8'));
} catch {
  // first measurement
}
for (const r of results.testResults) {
  seconds[relative(root, r.name)] = Math.round((r.endTime - r.startTime) / 1000);
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
process.stdout.write(`${Object.keys(results.testResults).length} suites measured into ${relative(root, file)}\n`);
