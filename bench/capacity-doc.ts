import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../scripts/lib/processes';
import { CapacityMeasurement, renderCapacity, spliceGenerated } from './lib/capacity-report';

/**
 * Writes bench/results/capacity.md and the generated part of docs/capacity.md from a capacity
 * measurement. `node dist/bench/capacity-doc.js [file.json]` does it again from a saved
 * bench/results/capacity.json (by default), e.g. after the model's assumptions changed, without
 * measuring again.
 */
export function writeCapacityReport(m: CapacityMeasurement): string {
  const markdown = renderCapacity(m);
  writeFileSync(join(repoRoot(), 'bench', 'results', 'capacity.md'), markdown + '\n');
  const doc = join(repoRoot(), 'docs', 'capacity.md');
  writeFileSync(doc, spliceGenerated(readFileSync(doc, 'utf8'), markdown));
  return markdown;
}

if (require.main === module) {
  const file = process.argv[2] ?? join(repoRoot(), 'bench', 'results', 'capacity.json');
  writeCapacityReport(JSON.parse(readFileSync(file, 'utf8')) as CapacityMeasurement);
  process.stdout.write(`docs/capacity.md and bench/results/capacity.md written from ${file}\n`);
}
