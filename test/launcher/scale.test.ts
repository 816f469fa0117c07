import { spawnSync } from 'node:child_process';
import { createServer, Server } from 'node:net';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { parseScale, replicaName, replicaPorts, scaleFromArgs, startArgs } from '../../scripts/lib/scale';
import { repoRoot } from '../../scripts/lib/processes';

/** `npm start -- --scale app=n`: what it accepts, what it refuses (with the reason), and the ports it hands out. */
describe('quick start --scale', () => {
  it('reads app=count entries; apps not named run once', () => {
    expect(parseScale('tokenizer=2,notifier=3')).toEqual({ tokenizer: 2, settlement: 1, notifier: 3, api: 1, console: 1, admin: 1 });
    expect(parseScale(' api = 2 ')).toEqual({ tokenizer: 1, settlement: 1, notifier: 1, api: 2, console: 1, admin: 1 });
  });

  it.each([
    ['bogus=2', '--scale: unknown app "bogus"; the apps are tokenizer, settlement, notifier, api, console, admin'],
    ['tokenizer=0', '--scale: tokenizer=0: the count must be a whole number from 1 to 16'],
    ['tokenizer=1.5', '--scale: tokenizer=1.5: the count must be a whole number from 1 to 16'],
    ['tokenizer=two', '--scale: tokenizer=two: the count must be a whole number from 1 to 16'],
    ['tokenizer=', '--scale: tokenizer=(nothing): the count must be a whole number from 1 to 16'],
    ['tokenizer=17', '--scale: tokenizer=17: the count must be a whole number from 1 to 16'],
    ['tokenizer', '--scale: "tokenizer" is not app=count (e.g. tokenizer=2)'],
    ['tokenizer=2,tokenizer=3', '--scale: tokenizer is named twice'],
    ['', '--scale needs app=count entries, e.g. --scale tokenizer=2,notifier=2'],
  ])('refuses %j: %s', (spec, message) => {
    expect(() => parseScale(spec)).toThrow(message);
  });

  it('takes the flag in either form, else SCALE, and refuses other arguments', () => {
    expect(scaleFromArgs(['--scale', 'notifier=2'], {}).notifier).toBe(2);
    expect(scaleFromArgs(['--scale=notifier=4'], {}).notifier).toBe(4);
    expect(scaleFromArgs([], { SCALE: 'settlement=2' }).settlement).toBe(2);
    expect(scaleFromArgs(['--scale', 'api=2'], { SCALE: 'settlement=2' })).toEqual({
      tokenizer: 1,
      settlement: 1,
      notifier: 1,
      api: 2,
      console: 1,
      admin: 1,
    });
    expect(scaleFromArgs([], {})).toEqual({ tokenizer: 1, settlement: 1, notifier: 1, api: 1, console: 1, admin: 1 });
    expect(() => scaleFromArgs([], { SCALE: 'x=1' })).toThrow('SCALE: unknown app "x"');
    expect(() => scaleFromArgs(['--scal', 'api=2'], {})).toThrow('unknown argument "--scal"');
    expect(() => scaleFromArgs(['--scale'], {})).toThrow('--scale needs app=count entries');
  });

  it('takes --with-prometheus beside --scale, in any order', () => {
    expect(startArgs([], {}).withPrometheus).toBe(false);
    expect(startArgs(['--with-prometheus', '--scale', 'notifier=2'], {})).toMatchObject({ withPrometheus: true, scale: { notifier: 2 } });
    expect(startArgs(['--scale=api=2', '--with-prometheus'], {})).toMatchObject({ withPrometheus: true, scale: { api: 2 } });
    expect(() => startArgs(['--with-prometheus=yes'], {})).toThrow('the options are --scale app=count[,app=count…] and --with-prometheus');
  });

  it('names replicas app-1, app-2… and a lone process by its app', () => {
    expect(replicaName('tokenizer', 2, 2)).toBe('tokenizer-2');
    expect(replicaName('tokenizer', 1, 1)).toBe('tokenizer');
  });

  it("gives each extra replica the first port above its app's default that no one holds", async () => {
    // Something else listens on 3005: the second notifier skips it.
    const busy = new Set([3005]);
    const ports = await replicaPorts(
      { tokenizer: 2, settlement: 1, notifier: 3, api: 2, console: 2, admin: 1 },
      { tokenizer: 3001, settlement: 3002, notifier: 3003, api: 3000, console: 3100, admin: 3010 },
      { tokenizer: 3001, settlement: 3002, notifier: 3003, api: 3000, console: 3100, admin: 3010 },
      async (port) => !busy.has(port),
    );
    expect(ports).toEqual({
      tokenizer: [3001, 3004],
      settlement: [3002],
      notifier: [3003, 3006, 3007],
      api: [3000, 3008],
      console: [3100, 3101],
      admin: [3010],
    });
  });

  it('checks real ports: one in use is skipped', async () => {
    const server: Server = createServer();
    const held = await new Promise<number>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port)),
    );
    try {
      const { isPortFree } = await import('../../scripts/lib/local-servers');
      const ports = await replicaPorts(
        { tokenizer: 2, settlement: 1, notifier: 1, api: 1, console: 1, admin: 1 },
        { tokenizer: held, settlement: 1, notifier: 2, api: 3, console: 5, admin: 4 },
        { tokenizer: held - 1, settlement: 1, notifier: 2, api: 3, console: 5, admin: 4 },
        (port) => isPortFree(port),
      );
      expect(ports.tokenizer[1]).toBeGreaterThan(held);
    } finally {
      server.close();
    }
  });

  it('npm start stops on a bad --scale before it starts anything, saying why', () => {
    const root = repoRoot();
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-scale-'));
    const run = spawnSync(process.execPath, [join(root, 'dist', 'scripts', 'start.js'), '--scale', 'tokenizer=0'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stdout).toContain('npm start: --scale: tokenizer=0: the count must be a whole number from 1 to 16');
    // Nothing was reached for: no probe of Postgres or Redis was printed.
    expect(run.stdout).not.toContain('postgres:');
  });
});
