import type { FeeRate, MethodKind } from '@app/contracts';
import { percentToPpm } from '@app/split';
import type { EnvReader } from '@app/platform';

/**
 * The fee plan of a merchant without its own row for a key (so a new merchant sells at once):
 * `FEE_DEFAULT_CREDIT` / `FEE_DEFAULT_DEBIT` as `<percent>+<fixed cents>`, e.g. `2.99+0`.
 */
export function readDefaultFeePlan(r: EnvReader): Record<MethodKind, FeeRate> {
  const read = (name: string, fallback: string): FeeRate => {
    const raw = r.str(name, fallback);
    const m = /^([\d.]+)\+(\d{1,9})$/.exec(raw);
    const ratePpm = m ? percentToPpm(m[1]) : undefined;
    if (!m || ratePpm === undefined) {
      r.problem(`${name} must be <percent with up to 4 decimals>+<fixed cents>, e.g. 2.99+0 (got "${raw}")`);
      return { ratePpm: 0, fixed: 0 };
    }
    return { ratePpm, fixed: Number(m[2]) };
  };
  return { credit: read('FEE_DEFAULT_CREDIT', '2.99+0'), debit: read('FEE_DEFAULT_DEBIT', '1.99+0') };
}
