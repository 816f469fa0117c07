import { MIGRATED_TABLES, OWNER_ONLY_TABLES, unknownGrantTables } from './migrated-objects';
import { ROLE_GRANTS } from './role-grants';
import { applyRoleGrants } from './roles';

describe('role grants name only tables a migration creates', () => {
  const misspelled = { ...ROLE_GRANTS, gateway_api: { ...ROLE_GRANTS.gateway_api, listener: { select: 'all' as const } } };

  it('the map as shipped names only known tables', () => {
    expect(unknownGrantTables()).toEqual([]);
    for (const table of OWNER_ONLY_TABLES) expect(Object.hasOwn(MIGRATED_TABLES, table)).toBe(false);
  });

  it('a misspelled table is reported with its role', () => {
    expect(unknownGrantTables(misspelled)).toEqual(['gateway_api: listener']);
  });

  it('applyRoleGrants refuses it loudly before running any statement (it is not skipped as "created later")', async () => {
    const statements: string[] = [];
    const q = {
      query: async (sql: string) => {
        statements.push(sql);
        return [];
      },
    };
    await expect(applyRoleGrants(q, misspelled)).rejects.toThrow(/no migration creates .*gateway_api: listener/);
    expect(statements).toEqual([]);
  });
});
