import type { OperatorRole } from '@app/operators';

export interface CommandGuard {
  /** The least role that may run the command. */
  role: OperatorRole;
  /** The action's name in the audit trail (the command's name, unless an HTTP action shares it). */
  action: string;
  /** operator:create only: may run without a token while no active admin exists (the first admin). */
  bootstrap?: boolean;
}

const GUARD = Symbol('cli:guard');

/**
 * Every command declares who may run it and what the audit trail calls it, in one line above
 * `@Command`: `@Guarded('operator', 'fees:set')`. The CLI refuses to start with a command that
 * does not (CommandGate), so none runs unauthenticated or unaudited.
 */
export function Guarded(role: OperatorRole, action: string, extra: Pick<CommandGuard, 'bootstrap'> = {}): ClassDecorator {
  return (target) => Reflect.defineMetadata(GUARD, { role, action, ...extra } satisfies CommandGuard, target);
}

export function guardOf(commandClass: object): CommandGuard | undefined {
  return Reflect.getMetadata(GUARD, commandClass) as CommandGuard | undefined;
}
