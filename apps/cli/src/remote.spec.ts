import 'reflect-metadata';
import { BREAK_GLASS_COMMANDS, REMOTE_COMMANDS } from '@app/contracts';
import { CliModule } from './cli.module';
import { runsRemotely } from './remote';

/** nest-commander's metadata key for @Command. */
const COMMAND_META = 'CommandBuilder:Command:Meta';

describe('where each operator command runs', () => {
  const providers = (Reflect.getMetadata('providers', CliModule) ?? []) as unknown[];
  const names = providers
    .map((p) => (typeof p === 'function' ? (Reflect.getMetadata(COMMAND_META, p) as { name: string } | undefined)?.name : undefined))
    .filter((n): n is string => n !== undefined)
    .sort();

  it('names every command of the CLI once: on the admin app or break-glass, never both, never neither', () => {
    expect(names.length).toBeGreaterThan(30);
    expect([...REMOTE_COMMANDS, ...BREAK_GLASS_COMMANDS].sort()).toEqual(names);
  });

  it('sends a command to the admin app only with GATEWAY_ADMIN_URL, and keeps break-glass passes and the bootstrap here', () => {
    const admin = { GATEWAY_ADMIN_URL: 'http://127.0.0.1:3010', GATEWAY_OPERATOR_TOKEN: 'op_x' };
    expect(runsRemotely(['merchant:create', '--name', 'x'], admin)).toBe(true);
    expect(runsRemotely(['merchant:create', '--name', 'x'], { GATEWAY_OPERATOR_TOKEN: 'op_x' })).toBe(false);
    expect(runsRemotely(['vault:rotate-key'], admin)).toBe(false);
    expect(runsRemotely(['retention:run'], admin)).toBe(false);
    expect(runsRemotely(['operator:create', '--name', 'first', '--role', 'admin'], { GATEWAY_ADMIN_URL: admin.GATEWAY_ADMIN_URL })).toBe(
      false,
    );
    expect(runsRemotely(['operator:create', '--name', 'next', '--role', 'viewer'], admin)).toBe(true);
    expect(runsRemotely([], admin)).toBe(false);
    expect(runsRemotely(['--help'], admin)).toBe(false);
  });
});
