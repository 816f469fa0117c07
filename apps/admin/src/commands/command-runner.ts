import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { AdminConfig } from '../config/admin.config';

export interface CommandRun {
  /** The CLI's exit code; null when it was stopped (timeout, output limit). */
  exitCode: number | null;
  /** What it printed: its JSON answer on stdout, progress and errors on stderr. */
  stdout: string;
  stderr: string;
}

export interface CommandCall {
  name: string;
  args: string[];
  /** Given to the command on its standard input (closed at once without). */
  stdin?: string;
  /** The caller's operator token: the CLI checks it, its role and writes the audit trail. */
  token: string;
  /** Where the call came from, for the audit trail's origin. */
  origin: string;
}

/** The operator CLI as built beside this app (dist/apps/cli/src/main.js). */
const CLI_ENTRY = join(__dirname, '..', '..', '..', 'cli', 'src', 'main.js');

/** Set by the launcher for this app, meaningless to the CLI it runs (which would take PORT for the api's). */
const NOT_FOR_THE_CLI = ['PORT', 'HOST', 'GATEWAY_OPERATOR_TOKEN', 'GATEWAY_ADMIN_URL'];

/**
 * Runs one operator command as the CLI does, in a process of its own, with this app's database
 * login (the operator role, which operators themselves no longer hold) and the caller's token. The
 * CLI's command gate does the rest, as it always has: the token's role against the command's, the
 * `attempted` and outcome events of the audit trail, the refusals. Arguments go to the process as
 * an argument vector, never through a shell.
 */
@Injectable()
export class CommandRunner {
  private readonly logger = new Logger('Commands');
  private running = 0;

  constructor(private readonly config: AdminConfig) {}

  /** Whether one more command may start now (ADMIN_MAX_COMMANDS). */
  tryReserve(): boolean {
    if (this.running >= this.config.maxCommands) return false;
    this.running++;
    return true;
  }

  /** Resolves once no command is running. */
  async idle(): Promise<void> {
    while (this.running > 0) await new Promise((r) => setTimeout(r, 200));
  }

  async run(call: CommandCall): Promise<CommandRun> {
    const started = Date.now();
    try {
      const result = await this.spawnCli(call);
      // Names and outcomes only: arguments can hold what a log has no business keeping.
      this.logger.log(`${call.name} ended with exit ${result.exitCode} in ${Date.now() - started} ms (${call.origin})`);
      return result;
    } finally {
      this.running--;
    }
  }

  private spawnCli(call: CommandCall): Promise<CommandRun> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of NOT_FOR_THE_CLI) delete env[name];
    env.GATEWAY_OPERATOR_TOKEN = call.token;
    env.GATEWAY_COMMAND_ORIGIN = call.origin;
    const child = spawn(process.execPath, [CLI_ENTRY, call.name, ...call.args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    child.stdin.on('error', () => undefined);
    child.stdin.end(call.stdin ?? '');
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let stopped: string | undefined;
    const stop = (why: string) => {
      if (stopped) return;
      stopped = why;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
    };
    child.stdout.on('data', (b: Buffer) => {
      outBytes += b.length;
      if (outBytes > this.config.outputLimitBytes) return stop(`printed more than ${this.config.outputLimitBytes} bytes`);
      out.push(b);
    });
    child.stderr.on('data', (b: Buffer) => {
      errBytes += b.length;
      if (errBytes > this.config.outputLimitBytes) return stop(`printed more than ${this.config.outputLimitBytes} bytes`);
      err.push(b);
    });
    const timer = setTimeout(() => stop(`ran longer than ${this.config.commandTimeoutMs} ms`), this.config.commandTimeoutMs);
    return new Promise((resolve, reject) => {
      child.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.once('close', (code) => {
        clearTimeout(timer);
        let stderr = Buffer.concat(err).toString('utf8');
        if (stopped) stderr += `${JSON.stringify({ error: `the admin app stopped ${call.name}: it ${stopped}` })}\n`;
        resolve({ exitCode: stopped ? null : code, stdout: Buffer.concat(out).toString('utf8'), stderr });
      });
    });
  }
}
