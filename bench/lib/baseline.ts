import { spawn } from 'node:child_process';
import { Client } from 'pg';
import { join } from 'node:path';
import { once } from 'node:events';

export interface Baseline {
  url: string;
  stop(): Promise<void>;
}

export async function startBaseline(responseBody: string): Promise<Baseline> {
  const child = spawn(process.execPath, [join(__dirname, '..', 'baseline-server.js'), responseBody], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout, 'data')) as [Buffer];
  const port = Number(chunk.toString().trim());
  return {
    url: `http://127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

const BARE_PIPELINE_PATTERN = 'bench.bare-sale';

/**
 * The bare sale pipeline, started beside the stack: the same crossings a sale makes stripped of
 * everything else (bench/bare-pipeline-server.ts → one job → bench/bare-worker.ts in `insert`
 * mode → one `INSERT … RETURNING` → the reply → the answer), on the stack's Redis, queue prefix
 * and database, with the tokenizer's concurrency and pool. The sale scenarios are read against
 * it as well as against the bare HTTP server: it is the floor this architecture allows here.
 */
export async function startBarePipeline(env: NodeJS.ProcessEnv, responseBody: string): Promise<Baseline> {
  const db = new Client({ connectionString: env.DATABASE_URL });
  await db.connect();
  await db.query('CREATE TABLE IF NOT EXISTS bench_bare_pipeline (id uuid PRIMARY KEY, at timestamptz NOT NULL DEFAULT now())');
  const concurrency = env.TOKENIZER_CONCURRENCY ?? '32';
  const worker = spawn(process.execPath, [join(__dirname, '..', 'bare-worker.js'), BARE_PIPELINE_PATTERN, concurrency, 'insert'], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const server = spawn(process.execPath, [join(__dirname, '..', 'bare-pipeline-server.js'), BARE_PIPELINE_PATTERN, responseBody], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = async () => {
    for (const child of [server, worker]) {
      if (child.exitCode !== null) continue;
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    await db.query('DROP TABLE IF EXISTS bench_bare_pipeline').finally(() => db.end());
  };
  try {
    await once(worker.stdout, 'data');
    const [chunk] = (await once(server.stdout, 'data')) as [Buffer];
    return { url: `http://127.0.0.1:${Number(chunk.toString().trim())}`, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
