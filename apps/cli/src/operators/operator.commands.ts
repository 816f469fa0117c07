import { Command, CommandRunner, Option } from 'nest-commander';
import { OperatorsRepository } from '@app/persistence';
import { isOperatorName, isOperatorRole, newOperatorToken, OPERATOR_ROLES, RefusedError } from '@app/operators';
import { CliError, printJson } from '../output';
import { Guarded } from './guarded';
import { OperatorSession } from './operator-session';

const nameOf = (v: string | undefined): string => {
  const name = v?.trim();
  if (!name) throw new CliError('--name is required');
  if (!isOperatorName(name))
    throw new CliError('--name must be 1 to 64 letters, digits or . _ @ - (starting with a letter or digit), and not a card number');
  return name;
};

@Guarded('admin', 'operator:create', { bootstrap: true })
@Command({
  name: 'operator:create',
  description:
    'Create an operator with a role (viewer, operator, admin); prints its token once. Without a token, creates the first admin only',
})
export class OperatorCreateCommand extends CommandRunner {
  constructor(
    private readonly operators: OperatorsRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { name?: string; role?: string }): Promise<void> {
    const name = nameOf(o.name);
    if (!isOperatorRole(o.role)) throw new CliError(`--role must be one of ${OPERATOR_ROLES.join(', ')}`);
    const { token, hash } = newOperatorToken();
    const row = await this.operators.create({ name, role: o.role, tokenHash: hash, createdBy: this.session.actor?.id });
    if (row === 'admin_exists')
      throw new RefusedError('an active admin exists: set GATEWAY_OPERATOR_TOKEN to an admin token to create operators');
    if (row === 'name_taken')
      throw new CliError(`--name: an operator named ${JSON.stringify(name)} exists (names stay taken after a revocation)`);
    printJson({
      operator: row.name,
      role: row.role,
      createdAt: row.created_at,
      token,
      note: 'the token is shown once: hand it to the operator, who sets it as GATEWAY_OPERATOR_TOKEN',
    });
  }

  @Option({ flags: '--name <name>', description: 'the person, e.g. alice or alice@example.com' })
  parseName(v: string): string {
    return v;
  }

  @Option({ flags: '--role <role>', description: OPERATOR_ROLES.join('|') })
  parseRole(v: string): string {
    return v;
  }
}

@Guarded('admin', 'operator:revoke')
@Command({ name: 'operator:revoke', description: "Revoke an operator's token at once (never the last active admin)" })
export class OperatorRevokeCommand extends CommandRunner {
  constructor(
    private readonly operators: OperatorsRepository,
    private readonly session: OperatorSession,
  ) {
    super();
  }

  async run(_args: string[], o: { name?: string }): Promise<void> {
    const name = nameOf(o.name);
    const r = await this.operators.revoke(name, this.session.actor!.id);
    if ('problem' in r) {
      if (r.problem === 'not_found') throw new CliError(`--name: no operator ${JSON.stringify(name)}`);
      if (r.problem === 'already_revoked') throw new CliError(`--name: operator ${JSON.stringify(name)} is already revoked`);
      throw new RefusedError(`${name} is the last active admin: create another admin first`);
    }
    printJson({ operator: r.revoked.name, role: r.revoked.role, revokedAt: r.revoked.revoked_at });
  }

  @Option({ flags: '--name <name>' })
  parseName(v: string): string {
    return v;
  }
}

@Guarded('admin', 'operator:list')
@Command({ name: 'operator:list', description: 'Every operator with role, creator, revocation and last use (never a token or its hash)' })
export class OperatorListCommand extends CommandRunner {
  constructor(private readonly operators: OperatorsRepository) {
    super();
  }

  async run(): Promise<void> {
    printJson(
      (await this.operators.list()).map((o) => ({
        operator: o.name,
        role: o.role,
        active: o.revoked_at === null,
        createdAt: o.created_at,
        createdBy: o.created_by_name,
        revokedAt: o.revoked_at,
        revokedBy: o.revoked_by_name,
        lastUsedAt: o.last_used_at,
      })),
    );
  }
}
