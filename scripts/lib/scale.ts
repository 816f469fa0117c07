import { AppName, APP_NAMES } from './launcher';

/**
 * How many processes of each app a launcher runs: `--scale tokenizer=2,notifier=2` (or the same
 * in SCALE). Every app not named runs once. Replicas of an app compete for its queues (workers)
 * or share its load behind a balancer (api); each has a port of its own for /health and /metrics.
 */

export type Scale = Record<AppName, number>;

/** The most of one app a single machine is asked to run: more is almost surely a typo. */
export const MAX_REPLICAS = 16;

export class ScaleError extends Error {}

/** Parses `app=n[,app=n…]`; throws a ScaleError naming what is wrong (unknown app, a count that is not 1..16). */
export function parseScale(spec: string, source = '--scale'): Scale {
  const scale = Object.fromEntries(APP_NAMES.map((n) => [n, 1])) as Scale;
  const entries = spec
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new ScaleError(`${source} needs app=count entries, e.g. ${source} tokenizer=2,notifier=2`);
  const seen = new Set<string>();
  for (const entry of entries) {
    const m = /^([^=\s]+)\s*=\s*(\S*)$/.exec(entry);
    if (!m) throw new ScaleError(`${source}: "${entry}" is not app=count (e.g. tokenizer=2)`);
    const [, app, count] = m;
    if (!(APP_NAMES as readonly string[]).includes(app)) {
      throw new ScaleError(`${source}: unknown app "${app}"; the apps are ${APP_NAMES.join(', ')}`);
    }
    if (seen.has(app)) throw new ScaleError(`${source}: ${app} is named twice`);
    seen.add(app);
    if (!/^\d+$/.test(count) || Number(count) < 1 || Number(count) > MAX_REPLICAS) {
      throw new ScaleError(`${source}: ${app}=${count || '(nothing)'}: the count must be a whole number from 1 to ${MAX_REPLICAS}`);
    }
    scale[app as AppName] = Number(count);
  }
  return scale;
}

/** What `npm start` was asked for on its command line. */
export interface StartArgs {
  scale: Scale;
  /** `--with-prometheus`: also run a Prometheus scraping every replica, with the alert rules (scripts/lib/prometheus.ts). */
  withPrometheus: boolean;
}

/**
 * The scale asked for on the command line (`--scale x=n` or `--scale=x=n`), else in SCALE, else
 * one of each; and `--with-prometheus`. Any other argument is refused, so a mistyped flag is not
 * silently ignored.
 */
export function startArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): StartArgs {
  let spec: { text: string; source: string } | undefined;
  let withPrometheus = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--scale') {
      if (i + 1 >= argv.length) throw new ScaleError('--scale needs app=count entries, e.g. --scale tokenizer=2,notifier=2');
      spec = { text: argv[++i], source: '--scale' };
    } else if (arg.startsWith('--scale=')) {
      spec = { text: arg.slice('--scale='.length), source: '--scale' };
    } else if (arg === '--with-prometheus') {
      withPrometheus = true;
    } else {
      throw new ScaleError(`unknown argument "${arg}"; the options are --scale app=count[,app=count…] and --with-prometheus`);
    }
  }
  if (!spec && env.SCALE) spec = { text: env.SCALE, source: 'SCALE' };
  const scale = spec ? parseScale(spec.text, spec.source) : parseScale(APP_NAMES.map((n) => `${n}=1`).join(','));
  return { scale, withPrometheus };
}

/** The scale alone (see startArgs). */
export function scaleFromArgs(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Scale {
  return startArgs(argv, env).scale;
}

/** The name of replica `index` (1-based) of `n`: the app's own name when it runs alone, else tokenizer-1, tokenizer-2… */
export function replicaName(app: AppName, index: number, n: number): string {
  return n === 1 ? app : `${app}-${index}`;
}

/**
 * Ports for every replica: each app's first replica gets `first(app)`, and every other replica
 * the first port above its app's default that is not taken (by another replica, or by `isFree`).
 */
export async function replicaPorts(
  scale: Scale,
  defaults: Record<AppName, number>,
  first: Record<AppName, number>,
  isFree: (port: number) => Promise<boolean>,
): Promise<Record<AppName, number[]>> {
  const taken = new Set<number>(APP_NAMES.map((n) => first[n]));
  const out = Object.fromEntries(APP_NAMES.map((n) => [n, [first[n]]])) as Record<AppName, number[]>;
  for (const app of APP_NAMES) {
    let candidate = defaults[app];
    for (let i = 1; i < scale[app]; i++) {
      while (taken.has(candidate) || !(await isFree(candidate))) {
        if (++candidate > 65535) throw new ScaleError(`no free port above ${defaults[app]} for ${replicaName(app, i + 1, scale[app])}`);
      }
      taken.add(candidate);
      out[app].push(candidate);
    }
  }
  return out;
}
