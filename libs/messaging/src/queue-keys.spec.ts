import { createHash } from 'node:crypto';
import { Events, Patterns, SALE_PATH_QUEUES } from '@app/contracts';
import type { RedisConnection } from '@app/platform/redis';
import {
  CLUSTER_SLOTS,
  partitionIndex,
  partitionName,
  partitionOn,
  partitionSlotRange,
  partitionTag,
  queueOn,
  slotOf,
  splitConcurrency,
} from './queue-keys';

const HOT = SALE_PATH_QUEUES;
const server = {} as RedisConnection;
const cluster = { isCluster: true } as unknown as RedisConnection;
/** How `redis-cli --cluster create` splits the slots over three masters. */
const THREE_MASTERS = [
  { from: 0, to: 5461 },
  { from: 5461, to: 10923 },
  { from: 10923, to: CLUSTER_SLOTS },
];
const masterOf = (slot: number) => THREE_MASTERS.findIndex((m) => slot >= m.from && slot < m.to);
/** Transaction-like ids, the same on every run. */
const ids = (n: number) => Array.from({ length: n }, (_, i) => createHash('sha256').update(`tx-${i}`).digest('hex').slice(0, 32));

describe('queue keys', () => {
  it('computes the slot Redis computes (CRC16 XMODEM mod 16384)', () => {
    expect(slotOf('123456789')).toBe(0x31c3);
    expect(slotOf('foo')).toBe(12182);
    expect(slotOf('')).toBe(0);
  });

  it('keeps names and prefixes exactly as before with one partition', () => {
    for (const q of HOT) {
      expect(partitionName(q, 0, 1)).toBe(q);
      expect(partitionOn(server, 'gw', q, 0, 1)).toEqual({ name: q, ...queueOn(server, 'gw', q) });
      expect(partitionOn(cluster, 'gw', q, 0, 1)).toEqual({ name: q, connection: cluster, prefix: `gw:{${q}}` });
      expect(partitionIndex(`anything-${q}`, 1)).toBe(0);
    }
    expect(partitionOn(server, 'gw', 'card.authorize', 0, 1).prefix).toBe('gw');
  });

  it('gives each partition a name of its own, under the plain prefix on one server and its own tag on a cluster', () => {
    const names = [0, 1, 2].map((i) => partitionOn(server, 'gw', 'card.authorize', i, 3));
    expect(names.map((n) => n.name)).toEqual(['card.authorize#0', 'card.authorize#1', 'card.authorize#2']);
    expect(names.map((n) => n.prefix)).toEqual(['gw', 'gw', 'gw']);
    const tagged = [0, 1, 2].map((i) => partitionOn(cluster, 'gw', 'card.authorize', i, 3));
    tagged.forEach((t, i) => expect(t.prefix).toBe(`gw:{${partitionTag('card.authorize', i, 3)}}`));
    tagged.forEach((t, i) => expect(t.prefix).toMatch(new RegExp(`^gw:\\{card\\.authorize#${i}~[0-9a-z]+\\}$`)));
  });

  it('chooses the partition by job id: always the same one for one id, in range', () => {
    for (const n of [2, 3, 7, 64])
      for (const id of ids(200)) {
        const p = partitionIndex(id, n);
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(n);
        expect(partitionIndex(id, n)).toBe(p);
      }
    // Pinned: another hash or tag would strand the jobs already queued when a deploy changes it.
    const pinned = ['0b4bd1f4-7a3c-4d55-9f5e-000000000001', '0b4bd1f4-7a3c-4d55-9f5e-000000000002', 'outbox-42'];
    expect(pinned.map((id) => partitionIndex(id, 8))).toEqual([0, 1, 1]);
    expect([0, 1, 2].map((i) => partitionTag('card.authorize', i, 3))).toEqual([
      'card.authorize#0~3',
      'card.authorize#1~1',
      'card.authorize#2~2',
    ]);
  });

  it('spreads job ids evenly over the partitions', () => {
    for (const n of [2, 3, 8, 64]) {
      const counts = new Array<number>(n).fill(0);
      const all = ids(n * 500);
      for (const id of all) counts[partitionIndex(id, n)]++;
      for (const c of counts) {
        expect(c).toBeGreaterThan(500 * 0.8);
        expect(c).toBeLessThan(500 * 1.2);
      }
    }
  });

  it("places every partition's tag in its own slice of the slots, the same on every call", () => {
    for (const n of [2, 3, 4, 6, 16, 64])
      for (const q of [...Object.values(Patterns), ...Object.values(Events)])
        for (let i = 0; i < n; i++) {
          const { from, to } = partitionSlotRange(i, n);
          expect(from).toBeGreaterThanOrEqual(Math.floor((i * CLUSTER_SLOTS) / n));
          expect(to).toBeLessThanOrEqual(Math.floor(((i + 1) * CLUSTER_SLOTS) / n));
          const slot = slotOf(partitionTag(q, i, n));
          expect({ q, i, n, inRange: slot >= from && slot < to }).toEqual({ q, i, n, inRange: true });
          expect(partitionTag(q, i, n)).toBe(partitionTag(q, i, n));
        }
  });

  it("gives each of three evenly split masters an even share of the hot queues' partitions", () => {
    for (const n of [3, 6, 9]) {
      const perMaster = [0, 0, 0];
      for (const q of HOT) for (let i = 0; i < n; i++) perMaster[masterOf(slotOf(partitionTag(q, i, n)))]++;
      expect(perMaster).toEqual([0, 1, 2].map(() => (HOT.length * n) / 3));
    }
    // A count that is not a multiple of the masters still reaches every one of them.
    for (const n of [2, 4, 5]) {
      const perMaster = [0, 0, 0];
      for (const q of HOT) for (let i = 0; i < n; i++) perMaster[masterOf(slotOf(partitionTag(q, i, n)))]++;
      expect(perMaster.every((c) => c > 0)).toBe(true);
    }
  });

  it("cuts a pattern's concurrency over its partitions: the same total, at least one each", () => {
    expect(splitConcurrency(16, 1)).toEqual([16]);
    expect(splitConcurrency(16, 3)).toEqual([6, 5, 5]);
    expect(splitConcurrency(64, 8)).toEqual(new Array(8).fill(8));
    expect(splitConcurrency(2, 4)).toEqual([1, 1, 1, 1]);
  });
});
