import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../scripts/lib/processes';
import { CapacityMeasurement, renderCapacity, spliceGenerated } from './lib/capacity-report';

/**
 * Writes the runs to bench/results/capacity.json (a list of runs: what the page's figures are
 * computed from), bench/results/capacity.md, and the generated part of docs/capacity.md.
 * `node dist/bench/capacity-doc.js [a.json b.json …]` does it again from saved results (by
 * default bench/results/capacity.json) without measuring: to put the rounds of several runs into
 * one range (a copy of capacity.json kept after each run), or after the model's assumptions changed.
 */
export function writeCapacityReport(runs: CapacityMeasurement[]): string {
  const markdown = renderCapacity(runs);
  const dir = join(repoRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'capacity.json'), JSON.stringify(runs, null, 2) + '\n');
  writeFileSync(join(dir, 'capacity.md'), markdown + '\n');
  const doc = join(repoRoot(), 'docs', 'capacity.md');
  writeFileSync(doc, spliceGenerated(readFileSync(doc, 'utf8'), markdown));
  return markdown;
}

if (require.main === module) {
  const files = process.argv.length > 2 ? process.argv.slice(2) : [join(repoRoot(), 'bench', 'results', 'capacity.json')];
  // Each file holds one run or a list of them.
  const runs = files.flatMap((f) => [JSON.parse(readFileSync(f, 'utf8')) as CapacityMeasurement | CapacityMeasurement[]].flat());
  writeCapacityReport(runs);
  process.stdout.write(`docs/capacity.md and bench/results/capacity.{json,md} written from ${runs.length} runs in ${files.join(', ')}\n`);
}
