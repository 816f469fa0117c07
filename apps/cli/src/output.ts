/** The CLI's contract with scripts: one JSON document on stdout; progress and errors on stderr. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

export function progress(value: unknown): void {
  process.stderr.write(JSON.stringify(value) + '\n');
}

export class CliError extends Error {
  override name = 'CliError';
}
