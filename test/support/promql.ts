/**
 * Metric names in PromQL and in /metrics texts, so a suite can check that what the alert rules and
 * the dashboard query is what the apps export (test/deploy/prometheus.e2e.test.ts).
 */

/** Words of PromQL that are not metric names when they stand alone. */
const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'inf',
  'nan',
]);

/** The series a histogram or summary exports, each named for its base: x_bucket, x_sum, x_count are x. */
export const baseName = (name: string): string => name.replace(/_(bucket|sum|count)$/, '');

/**
 * The metric names an expression selects (as base names): every identifier that is not a
 * function or an aggregation (followed by `(`), a keyword, or a label inside `{…}` or a
 * `by (…)`-like clause. Strings, ranges (`[5m]`, `[$__rate_interval]`) and numbers are dropped.
 */
export function metricNamesIn(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/(?<![\w:.$])([a-zA-Z_:][\w:]*)(?![\w:]|\s*\()/g)) {
    if (!KEYWORDS.has(m[1].toLowerCase())) names.add(baseName(m[1]));
  }
  return [...names].sort();
}

/** The metric names (base names) a /metrics text holds samples of. */
export function exportedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{| )/gm)) names.add(baseName(m[1]));
  return names;
}
