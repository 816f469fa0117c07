/** One sample of a Prometheus text exposition: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of metric `name` in a /metrics text, each with its labels (`queue="x"` → { queue: 'x' }). */
export function samples(text: string, name: string): Sample[] {
  return text
    .split('\n')
    .map((line) => /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[1] === name)
    .map((m) => ({
      labels: Object.fromEntries([...(m[2] ?? '').matchAll(/([a-z_]+)="([^"]*)"/g)].map((l) => [l[1], l[2]])),
      value: Number(m[3]),
    }));
}

/** The value of the first sample of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  return samples(text, name).find((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
}
