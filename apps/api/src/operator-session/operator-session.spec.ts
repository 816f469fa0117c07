import type { OperatorsRepository } from '@app/persistence';
import { touchOperator } from './operator-session';

describe('touchOperator', () => {
  it('writes an operator’s last use at most once a minute, each operator on its own', async () => {
    const touched: string[] = [];
    const operators = { touch: (id: string) => Promise.resolve(void touched.push(id)) } as unknown as OperatorsRepository;
    const t0 = 1_800_000_000_000;
    await touchOperator(operators, 'a', t0);
    await touchOperator(operators, 'a', t0 + 1_000);
    await touchOperator(operators, 'b', t0 + 2_000);
    await touchOperator(operators, 'a', t0 + 59_999);
    expect(touched).toEqual(['a', 'b']);
    await touchOperator(operators, 'a', t0 + 60_000);
    await touchOperator(operators, 'b', t0 + 30_000);
    expect(touched).toEqual(['a', 'b', 'a']);
  });
});
