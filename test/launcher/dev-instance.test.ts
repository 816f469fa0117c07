import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { devInstance, SHARED_INSTANCE } from '../../scripts/lib/dev-instance';

describe("npm start: each checkout's own database and queues", () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-instance-'));
    dirs.push(dir);
    return dir;
  };
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('names a database and a queue prefix of its own on first start, and keeps them', () => {
    const dir = fresh();
    const first = devInstance(dir);
    expect(first.created).toBe(true);
    expect(first.instance.database).toMatch(/^gateway_[0-9a-f]{6}$/);
    expect(first.instance.queuePrefix).toBe(`gw${first.instance.database.slice('gateway_'.length)}`);
    expect(devInstance(dir)).toEqual({ instance: first.instance, created: false });
    // A second checkout (another DATA_DIR) gets other names.
    expect(devInstance(fresh()).instance.database).not.toBe(first.instance.database);
  });

  it('a DATA_DIR from before (keys, no names) keeps the shared database its data lives in', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'dev-keys.env'), 'TRANSIT_KEYS=t1:x\n');
    expect(devInstance(dir)).toEqual({ instance: SHARED_INSTANCE, created: true });
    expect(JSON.parse(readFileSync(join(dir, 'instance.json'), 'utf8'))).toEqual(SHARED_INSTANCE);
  });

  it('refuses a damaged instance.json, saying how to start from scratch', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'instance.json'), JSON.stringify({ database: 'x; DROP', queuePrefix: 'gw' }));
    expect(() => devInstance(dir)).toThrow(/delete it \(or all of .*\) to start from scratch/);
  });
});
