import { Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { CommandRunner } from 'nest-commander';
import { OperatorsRepository } from '@app/persistence';
import { AuditSubject, AuditTrail, looksLikeOperatorToken, operatorTokenHash, roleAllows } from '@app/operators';
import { CliConfig } from '../config/cli.config';
import { CliError } from '../output';
import { CommandGuard, guardOf } from './guarded';
import { OperatorSession } from './operator-session';
import { cliOrigin } from '../remote';

/** nest-commander's metadata key for @Command (constants.CommandMeta). */
const COMMAND_META = 'CommandBuilder:Command:Meta';
/** The options that name what a command acts on, most specific first. */
const TARGET_OPTIONS = ['delivery', 'recipient', 'transaction', 'merchant', 'name'] as const;

/**
 * The one gate every CLI command passes: at start-up it wraps each command's run() so that the
 * command runs only as an authenticated operator (GATEWAY_OPERATOR_TOKEN) whose role allows it,
 * and only between an `attempted` and an outcome event in the audit trail. Refusals (no token,
 * unknown or revoked token, role too low) are audited too and exit 1 without acting.
 */
@Injectable()
export class CommandGate implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly operators: OperatorsRepository,
    private readonly audit: AuditTrail,
    private readonly session: OperatorSession,
    private readonly config: CliConfig,
  ) {}

  onApplicationBootstrap(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const meta = wrapper.metatype && (Reflect.getMetadata(COMMAND_META, wrapper.metatype) as { name: string } | undefined);
      if (!meta) continue;
      const guard = guardOf(wrapper.metatype!);
      if (!guard)
        throw new Error(`command ${meta.name} declares no role: add @Guarded(<role>, <audit action>) to ${wrapper.metatype!.name}`);
      const command = wrapper.instance as CommandRunner;
      const run = command.run.bind(command);
      command.run = (args: string[], opts?: Record<string, unknown>) => this.guarded(guard, args, opts ?? {}, () => run(args, opts));
    }
  }

  private async guarded(guard: CommandGuard, args: string[], opts: Record<string, unknown>, run: () => Promise<void>): Promise<void> {
    const subject: AuditSubject = {
      action: guard.action,
      target: targetOf(opts),
      origin: commandOrigin(),
      detail: args.length ? { ...opts, args } : { ...opts },
    };
    const token = this.config.operatorToken;
    if (token === undefined) {
      // The first admin: nobody can hold a token yet. OperatorsRepository.create checks again under a lock.
      const noAdmin = guard.bootstrap && !(await this.operators.hasActiveAdmin());
      if (noAdmin && opts.role === 'admin') return this.audit.run({ ...subject, detail: { ...subject.detail, bootstrap: true } }, run);
      const first = noAdmin ? ' (with no admin yet, the first operator created without a token must be one: --role admin)' : '';
      return this.refuse(
        subject,
        'no operator token',
        `set GATEWAY_OPERATOR_TOKEN to your operator token (operator:create prints it)${first}`,
      );
    }
    const operator = looksLikeOperatorToken(token) ? await this.operators.findByTokenHash(operatorTokenHash(token)) : undefined;
    if (!operator) return this.refuse(subject, 'unknown operator token', 'GATEWAY_OPERATOR_TOKEN is not an operator token');
    const who = { ...subject, operator: { id: operator.id, name: operator.name } };
    if (operator.revoked_at) return this.refuse(who, 'revoked operator token', `operator ${operator.name} was revoked`);
    if (!roleAllows(operator.role, guard.role)) {
      return this.refuse(
        who,
        `role ${operator.role} below ${guard.role}`,
        `operator ${operator.name} (${operator.role}) may not run ${guard.action}: it needs the ${guard.role} role`,
      );
    }
    await this.operators.touch(operator.id);
    this.session.actor = { id: operator.id, name: operator.name, role: operator.role };
    await this.audit.run(who, run, () => ({ target: this.session.target ?? subject.target }));
  }

  private async refuse(subject: AuditSubject, reason: string, message: string): Promise<never> {
    await this.audit.refuse(subject, reason);
    throw new CliError(`refused: ${message}`);
  }
}

function targetOf(opts: Record<string, unknown>): string | undefined {
  for (const k of TARGET_OPTIONS) if (typeof opts[k] === 'string') return opts[k];
  return undefined;
}

/** `cli <os user>@<host>`: where a CLI action came from (a container may have no user entry for its uid). */
/**
 * Where the command came from: on the admin app, the caller it names (GATEWAY_COMMAND_ORIGIN, set
 * by the admin app for the CLI it runs); otherwise this shell's user and host.
 */
export function commandOrigin(): string {
  return process.env.GATEWAY_COMMAND_ORIGIN?.trim() || cliOrigin();
}
