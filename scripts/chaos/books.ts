import type { Client } from 'pg';
import type { CheckResult } from './checks';

/**
 * The sandbox's own books against the record, from its side: every authorization it approved
 * (`<transaction id>-authorize`, not a repeat) belongs to a transaction the gateway recorded with
 * the same tid, approved, or reversed at the sandbox since. acquirer:reconcile compares from the
 * record's side, by tid, so a charge the record never got a tid for is this check's to find.
 */
export async function sandboxBooks(db: Client): Promise<CheckResult> {
  const { rows } = await db.query<{ key: string; tid: string; problem: string }>(
    `WITH approved AS (
       SELECT s.operation_key AS key, s.tid, substring(s.operation_key FROM '^[0-9a-f-]{36}')::uuid AS tx
       FROM sandbox_calls s
       WHERE s.kind = 'authorize' AND NOT s.repeat AND s.result->>'outcome' = 'approved')
     SELECT a.key, a.tid,
       CASE WHEN t.id IS NULL THEN 'no such transaction'
            WHEN t.processor->>'tid' IS DISTINCT FROM a.tid THEN 'recorded with another tid'
            ELSE 'recorded as status ' || t.status || ', never reversed' END AS problem
     FROM approved a LEFT JOIN transactions t ON t.id = a.tx
     WHERE t.id IS NULL OR t.processor->>'tid' IS DISTINCT FROM a.tid
        OR (t.status <> ALL ($1) AND NOT EXISTS (
              SELECT 1 FROM sandbox_calls r WHERE r.kind IN ('reverse', 'cancel') AND r.tid = a.tid AND r.result->>'outcome' = 'approved'))`,
    [[3, 6, 8, 12]],
  );
  const [{ n }] = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM sandbox_calls WHERE kind = 'authorize' AND NOT repeat`))
    .rows;
  return {
    check: "the sandbox's charges all recorded",
    ok: rows.length === 0,
    detail: `${n} authorizations in the sandbox's books`,
    failures: rows.map((r) => `sandbox charge ${r.key} (tid ${r.tid}): ${r.problem}`),
  };
}
