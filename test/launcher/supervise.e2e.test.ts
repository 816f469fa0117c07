import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dropDatabase, withDatabase } from '../../scripts/lib/database';
import { freeServerPort } from '../../scripts/lib/local-servers';
import { repoRoot } from '../../scripts/lib/processes';

/** `npm start` as an operator runs it, on this run's Postgres and Redis, with a database of its own. */
describe('npm start supervises its apps', () => {
  const root = repoRoot();
  const dataDir = mkdtempSync(join(tmpdir(), 'gw-supervise-'));
  const database = withDatabase(process.env.DATABASE_URL!, `gw_supervise_${process.pid}`);
  let launcher: ChildProcess;
  let out = '';

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
    launcher = spawn(process.execPath, [join(root, 'dist', 'scripts', 'start.js'), '--scale', 'tokenizer=2'], {
      cwd: root,
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        DATABASE_URL: database,
        PORT: String(await freeServerPort()),
        CONSOLE_PORT: String(await freeServerPort()),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launcher.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    launcher.stderr!.on('data', (b: Buffer) => (out += b.toString()));
    await printed(/Processes \(each with \/health and \/metrics\):[\s\S]*admin\s+pid/, 150_000);
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

  it('restarts a replica that dies, while the rest serves; Ctrl-C still stops everything', async () => {
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

    const stopped = new Promise<number | null>((resolve) => launcher.once('exit', (code) => resolve(code)));
    launcher.kill('SIGINT');
    expect(await stopped).toBe(0);
    // A stop asked for is not taken for a crash: nothing was restarted on the way down.
    expect(out.slice(before)).not.toMatch(/restart 2\b/);
  }, 120_000);
});
