import { inKeyOrder, runDistinctGroups, statementBatcher } from './batching';

const tick = () => new Promise((r) => setImmediate(r));

describe('statementBatcher', () => {
  it('sends what arrives together as one batch and answers each caller in order', async () => {
    const batches: number[][] = [];
    const double = statementBatcher(async (items: readonly number[]) => (batches.push([...items]), items.map((n) => n * 2)));
    expect(await Promise.all([1, 2, 3].map(double))).toEqual([2, 4, 6]);
    expect(batches).toEqual([[1, 2, 3]]);
  });

  it('holds new items while maxInFlight batches are out, then sends them together', async () => {
    const batches: number[][] = [];
    const gates: (() => void)[] = [];
    const run = statementBatcher(
      async (items: readonly number[]) => {
        batches.push([...items]);
        await new Promise<void>((r) => gates.push(r));
        return [...items];
      },
      { maxInFlight: 1 },
    );
    const first = run(1);
    await tick();
    await tick();
    const held = [run(2), run(3), run(4)];
    await tick();
    await tick();
    expect(batches).toEqual([[1]]); // 2, 3 and 4 wait for the first batch
    gates.shift()!();
    await first;
    await tick();
    await tick();
    expect(batches).toEqual([[1], [2, 3, 4]]);
    gates.shift()!();
    expect(await Promise.all(held)).toEqual([2, 3, 4]);
  });

  it('with delayMs keeps the batch open that long, so items arriving apart go together', async () => {
    const batches: number[][] = [];
    const run = statementBatcher(async (items: readonly number[]) => (batches.push([...items]), [...items]), { delayMs: 30 });
    const first = run(1);
    await new Promise((r) => setTimeout(r, 10));
    const second = run(2);
    expect(batches).toEqual([]);
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(batches).toEqual([[1, 2]]);
  });

  it('on a constraint violation runs the items one by one, so only the bad one fails', async () => {
    const calls: number[][] = [];
    const run = statementBatcher(async (items: readonly number[]) => {
      calls.push([...items]);
      if (items.includes(13)) throw Object.assign(new Error('violates check constraint'), { code: '23514' });
      return [...items];
    });
    const results = await Promise.allSettled([run(1), run(13), run(2)]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(calls).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('on any other failure (the connection) fails the batch without running its items again', async () => {
    const calls: number[][] = [];
    const run = statementBatcher(async (items: readonly number[]) => {
      calls.push([...items]);
      throw Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined });
    });
    const results = await Promise.allSettled([run(1), run(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toEqual([[1, 2]]);
  });
});

describe('runDistinctGroups', () => {
  it('never puts two items with one key in a statement, and answers each item from its own', async () => {
    const statements: string[][] = [];
    const out = await runDistinctGroups(
      ['a1', 'b1', 'a2', 'a3'],
      (s) => s[0],
      async (group) => {
        statements.push(group);
        return (item) => `${item}@${statements.length}`;
      },
    );
    expect(statements).toEqual([['a1', 'b1'], ['a2'], ['a3']]);
    expect(out).toEqual(['a1@1', 'b1@1', 'a2@2', 'a3@3']);
  });

  it('throws a failure of the first statement (nothing committed), but past it fails only that group', async () => {
    await expect(
      runDistinctGroups(
        ['a1', 'a2'],
        (s) => s[0],
        async () => Promise.reject(new Error('first')),
      ),
    ).rejects.toThrow('first');
    let n = 0;
    const out = await runDistinctGroups(
      ['a1', 'b1', 'a2'],
      (s) => s[0],
      async () => {
        if (n++ === 1) throw new Error('second');
        return () => 'ok';
      },
    );
    expect(out.map((o) => (o instanceof Error ? o.message : o))).toEqual(['ok', 'ok', 'second']);
  });
});

describe('inKeyOrder', () => {
  it('orders by key without touching the input', () => {
    const input = [{ id: 'c' }, { id: 'a' }, { id: 'b' }];
    expect(inKeyOrder(input, (x) => x.id).map((x) => x.id)).toEqual(['a', 'b', 'c']);
    expect(input.map((x) => x.id)).toEqual(['c', 'a', 'b']);
  });
});
