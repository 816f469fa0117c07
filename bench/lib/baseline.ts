import { spawn } from 'node:child_process';
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
