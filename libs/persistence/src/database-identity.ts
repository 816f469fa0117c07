import type { Queryable } from './migrations/1764500000000-merchant-public-ids';
import { APP_ROLES, GATEWAY_SCHEMAS, RoleOwner } from './role-catalogue';
import { rowsOf } from './query-rows';

/** Who a connection is, as far as least privilege goes. */
export interface DatabaseIdentity {
  user: string;
  superuser: boolean;
  /** It owns (or is a member of the owner of) a table of the gateway's schemas. */
  ownsTables: boolean;
}

export async function databaseIdentity(q: Queryable): Promise<DatabaseIdentity> {
  const [r] = await rowsOf<{ user: string; superuser: boolean; owns_tables: boolean }>(
    q,
    `SELECT current_user AS user, (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) AS superuser,
       EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = ANY($1::text[]) AND pg_has_role(tableowner, 'MEMBER')) AS owns_tables`,
    [GATEWAY_SCHEMAS],
  );
  return { user: r.user, superuser: r.superuser, ownsTables: r.owns_tables };
}

/**
 * What is wrong with running `app` as this identity, in a sentence naming `variable` and the role
 * to use; undefined when it is a role of its own.
 */
export function identityProblem(id: DatabaseIdentity, app: RoleOwner, variable = 'DATABASE_URL'): string | undefined {
  const what = id.superuser ? 'a superuser' : id.ownsTables ? "the owner of the gateway's tables" : undefined;
  if (!what) return undefined;
  return `${variable} connects as "${id.user}", ${what}: ${app} must connect as its own role ${APP_ROLES[app]} (see docs/operations/database-roles.md)`;
}
