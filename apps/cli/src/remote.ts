import { hostname, userInfo } from 'node:os';
import { isRemoteCommand } from '@app/contracts';

/** The admin app's answer to POST /admin/commands/<name>. */
interface RemoteRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/** Who is calling, as the audit trail's origin names it: `cli user@host`. */
export function cliOrigin(): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    user = process.env.USER ?? `uid${process.getuid?.() ?? '?'}`;
  }
  return `cli ${user}@${hostname()}`;
}

/**
 * Whether this command goes to the admin app (GATEWAY_ADMIN_URL set): every command but the
 * break-glass ones, and operator:create without a token (the bootstrap of the first admin, which
 * needs the database login as break-glass passes do).
 */
export function runsRemotely(argv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  const name = argv[0];
  if (!env.GATEWAY_ADMIN_URL || !name || !isRemoteCommand(name)) return false;
  return !(name === 'operator:create' && !env.GATEWAY_OPERATOR_TOKEN?.trim());
}

/**
 * Runs the command on the admin app and says what it said: its stdout on stdout, its stderr on
 * stderr, its exit code as ours. A refusal by the admin app itself (no token, a break-glass
 * command, too many at once) is said as the CLI says errors: `{"error": …}` on stderr, exit 1.
 */
export async function runRemotely(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [name, ...args] = argv;
  const base = env.GATEWAY_ADMIN_URL!.replace(/\/+$/, '');
  const say = (error: string) => process.stderr.write(`${JSON.stringify({ error })}\n`);
  // On the admin app a command's arguments become a process's, which anyone on that host can list.
  if (args.some((a) => a === '--secret' || a.startsWith('--secret='))) {
    say('give the secret on standard input with --secret-stdin: through the admin app, --secret would show in its process list');
    return 1;
  }
  let res: Response;
  try {
    res = await fetch(`${base}/admin/commands/${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${env.GATEWAY_OPERATOR_TOKEN?.trim() ?? ''}`,
        'x-gateway-client': cliOrigin(),
      },
      // A secret piped in (--secret-stdin) travels in the body, never in the arguments.
      body: JSON.stringify({ args, ...(args.includes('--secret-stdin') ? { stdin: await readAllStdin() } : {}) }),
    });
  } catch (e) {
    say(
      `the admin app at ${base} (GATEWAY_ADMIN_URL) did not answer: ${(e as Error & { cause?: Error }).cause?.message ?? (e as Error).message}`,
    );
    return 1;
  }
  const text = await res.text();
  let body: Partial<RemoteRun> & { error?: string; message?: string };
  try {
    body = JSON.parse(text) as typeof body;
  } catch {
    say(`the admin app at ${base} answered ${res.status} with something that is not JSON`);
    return 1;
  }
  if (res.status !== 200) {
    say(body.error ?? body.message ?? `the admin app answered ${res.status}`);
    return 1;
  }
  if (body.stdout) process.stdout.write(body.stdout);
  if (body.stderr) process.stderr.write(body.stderr);
  return body.exitCode ?? 1;
}

async function readAllStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
