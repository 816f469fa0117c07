/**
 * `npm run simulator -- <cielo|erede> [--port <n>] [credentials]`: one acquirer's API on
 * http://127.0.0.1:<port>, for development and tests (never deployed). See docs/simulators/ (one page per acquirer).
 */
import { serveSimulator, Simulator } from './faults';

type Factory = (args: Map<string, string>) => Simulator;

/** Each simulator is loaded only when asked for (`<name>.ts` exports `<name>Simulator`). */
const FACTORIES: Record<string, () => Factory> = {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  cielo: () => (require('./cielo') as { cieloSimulator: Factory }).cieloSimulator,
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  erede: () => (require('./erede') as { eredeSimulator: Factory }).eredeSimulator,
};

function parseArgs(argv: string[]): { name: string; args: Map<string, string> } {
  const [name, ...rest] = argv;
  const args = new Map<string, string>();
  for (let i = 0; i < rest.length; i++) {
    const flag = rest[i];
    if (!flag.startsWith('--')) throw new Error(`unexpected argument: ${flag}`);
    const eq = flag.indexOf('=');
    if (eq > 0) args.set(flag.slice(2, eq), flag.slice(eq + 1));
    else args.set(flag.slice(2), rest[++i] ?? '');
  }
  return { name, args };
}

async function main(): Promise<void> {
  const { name, args } = parseArgs(process.argv.slice(2));
  const factory = FACTORIES[name];
  if (!factory) {
    process.stderr.write(`usage: npm run simulator -- <${Object.keys(FACTORIES).join('|')}> [--port <n>] [options]\n`);
    process.exit(2);
  }
  const sim = factory()(args);
  const { port } = await serveSimulator(sim, Number(args.get('port') ?? 0));
  // One line a launcher or a test can wait for and read the port from.
  process.stdout.write(`${sim.name} simulator listening on http://127.0.0.1:${port}\n`);
  const stop = () => process.exit(0);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

void main().catch((e: Error) => {
  process.stderr.write(`simulator: ${e.message}\n`);
  process.exit(1);
});
