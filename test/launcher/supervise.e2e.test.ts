import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabase } from '../../scripts/lib/database';
import { freeServerPort } from '../../scripts/lib/local-servers';
import { repoRoot } from '../../scripts/lib/processes';
import { targetsFile } from '../../scripts/lib/prometheus';
import { startPrometheusBeside } from '../../scripts/quick-start/prometheus';
import { eventually } from '../support/stack';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

/**
 * `npm start` as an operator runs it, on this run's Postgres and Redis, with a database of its own,
 * and `--with-prometheus` (on a port of its own): one launch for both, so the two never race for
 * the workers' default ports.
 */
describe('npm start supervises its apps, with a Prometheus beside them', () => {
  const root = repoRoot();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-supervise-'));
  const database = withDatabase(process.env.DATABASE_URL!, `gw_supervise_${process.pid}`);
  let launcher: ChildProcess;
  let out = '';
  let prometheus = '';

  /** Resolves once the launcher's output matches `pattern` (from `from` on), with the match. */
  const printed = (pattern: RegExp, timeoutMs: number, from = 0): Promise<RegExpMatchArray> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const m = out.slice(from).match(pattern);
        if (m) {
          clearInterval(timer);
          clearTimeout(limit);
          resolve(m);
        }
      };
      const timer = setInterval(check, 100);
      const limit = setTimeout(() => {
        clearInterval(timer);
        reject(new Error(`npm start did not print ${pattern} within ${timeoutMs} ms; it printed:\n${out.slice(-3000)}`));
      }, timeoutMs);
      check();
    });

  beforeAll(async () => {
    const args = ['--scale', 'tokenizer=2', '--with-prometheus'];
    launcher = spawn(process.execPath, [join(root, 'dist', 'scripts', 'start.js'), ...args], {
      cwd: root,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: database,
        PORT: String(await freeServerPort()),
        CONSOLE_PORT: String(await freeServerPort()),
        PROMETHEUS_PORT: String(await freeServerPort()),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launcher.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    launcher.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    await printed(/Processes \(each with \/health and \/metrics\):[\s\S]*admin\s+pid/, 150_000);
    // Without prometheus installed the stack starts anyway; the test that needs it then fails, saying so.
    prometheus = await printed(/^Prometheus: (http:\/\/\S+) /m, 5_000).then(
      (m) => m[1],
      () => '',
    );
  }, 180_000);

  afterAll(async () => {
    // A test that failed half-way: Ctrl-C, so that the launcher stops its apps (a SIGKILL would orphan them).
    if (launcher.exitCode === null) {
      const gone = new Promise((resolve) => launcher.once('exit', resolve));
      launcher.kill('SIGINT');
      await Promise.race([gone, new Promise((resolve) => setTimeout(resolve, 30_000))]);
      if (launcher.exitCode === null) launcher.kill('SIGKILL');
    }
    await dropDatabase(database).catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('--with-prometheus: scrapes every app and replica it started, and itself, with the alert rules loaded', async () => {
    if (!prometheus) throw new Error(`npm start printed no Prometheus URL (is prometheus installed?); it printed:\n${out.slice(-2000)}`);
    const api = async (path: string): Promise<Obj> => ((await (await fetch(`${prometheus}${path}`)).json()) as Obj).data;
    const processes = [...out.matchAll(/^ {2}(\S+)\s+pid \d+\s+(http:\/\/\S+)$/gm)].map((m) => ({ replica: m[1], url: m[2] }));
    expect(processes).toHaveLength(7);
    const targets = await eventually(
      async () => {
        const active = (await api('/api/v1/targets')).activeTargets as Obj[];
        const expected = [...processes.map((p) => p.replica), 'prometheus'].sort().map((r) => [r, 'up']);
        expect(active.map((t) => [t.labels.replica, t.health]).sort()).toEqual(expected);
        return active;
      },
      { timeoutMs: 45_000, intervalMs: 1_000 },
    );
    for (const p of processes) {
      const labels = { app: p.replica.replace(/-\d+$/, ''), replica: p.replica };
      expect(targets.find((t) => t.labels.replica === p.replica)).toMatchObject({ scrapeUrl: `${p.url}/metrics`, labels });
    }
    const rules = ((await api('/api/v1/rules')).groups as Obj[]).flatMap((g) => g.rules.map((r: Obj) => [r.name, r.health]));
    expect(rules).toHaveLength(9);
    expect(rules).toContainEqual(['GatewayTargetDown', 'ok']);
  }, 60_000);

  it('restarts a replica that dies, while the rest serves; Ctrl-C still stops everything', async () => {
    const targetsAt = prometheus ? statSync(targetsFile(dataDir)).mtimeMs : 0;
    const [, pidText, url] = await printed(/tokenizer-1\s+pid (\d+)\s+(http:\/\/\S+)/, 1_000);
    const api = (await printed(/\bapi\s+pid \d+\s+(http:\/\/\S+)/, 1_000))[1];
    const before = out.length;
    process.kill(Number(pidText), 'SIGKILL');

    await printed(/tokenizer-1 exited unexpectedly \(killed by SIGKILL\); restarting it in 1 s \(restart 1\)/, 10_000, before);
    // The stack did not stop: the api and the other tokenizer go on answering while it is down.
    expect((await fetch(`${api}/health`)).status).toBe(200);
    expect(out.slice(before)).not.toContain('stopping the other apps');

    await printed(/tokenizer-1: restarted and healthy \(restart 1\)/, 60_000, before);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^launcher_restarts\{app="tokenizer"\} 1$/m);
    expect(launcher.exitCode).toBeNull();
    if (prometheus) {
      // Prometheus's targets were written again for the restarted replica.
      expect(statSync(targetsFile(dataDir)).mtimeMs).toBeGreaterThan(targetsAt);
      expect(readFileSync(targetsFile(dataDir), 'utf8')).toContain(`"targets": [\n      "${new URL(url).host}"`);
    }

    const stopped = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
    launcher.kill('SIGINT');
    expect(await stopped).toBe(0);
    // A stop asked for is not taken for a crash: nothing was restarted on the way down.
    expect(out.slice(before)).not.toMatch(/restart 2\b/);
    // Prometheus went with the stack.
    if (prometheus) await expect(fetch(`${prometheus}/-/ready`, { signal: AbortSignal.timeout(2_000) })).rejects.toThrow();
  }, 120_000);

  it('--with-prometheus without prometheus on PATH: says so and starts nothing, and the stack runs on without it', async () => {
    const path = process.env.PATH;
    const said: string[] = [];
    const empty = mkdtempSync(join(tmpdir(), 'gw-empty-path-'));
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((line) => said.push(String(line)) > 0);
    try {
      process.env.PATH = empty;
      expect(await startPrometheusBeside(root, dataDir, dataDir, [])).toBeUndefined();
    } finally {
      process.env.PATH = path;
      write.mockRestore();
      rmSync(empty, { recursive: true, force: true });
    }
    expect(said.join('')).toMatch(/--with-prometheus: prometheus is not installed .*; the gateway runs without it/);
  });
});
