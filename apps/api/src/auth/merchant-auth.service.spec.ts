import { createHash, randomUUID } from 'node:crypto';
import type { MerchantsRepository } from '@app/persistence';
import type { ApiConfig } from '../config/api.config';
import type { RateLimitService } from '@app/http';
import { MerchantAuthService } from './merchant-auth.service';

/** A merchants repository that counts its reads: one real merchant, every other id unknown. */
function merchants(real: { id: string; key: string }) {
  const reads: string[] = [];
  const repo = {
    credentialsOf: (given: string) => {
      reads.push(given);
      return Promise.resolve(
        given === real.id
          ? { id: real.id, keyHash: createHash('sha256').update(real.key).digest(), limits: { writesPerS: null, readsPerS: null } }
          : undefined,
      );
    },
  };
  return { repo: repo as unknown as MerchantsRepository, reads };
}

describe('merchant credentials cache (issue 32 finding 5)', () => {
  const config = { merchantCacheMs: 60_000, merchantNegativeCacheMs: 1_000 } as ApiConfig;

  it('about 10 000 unknown merchant ids do not evict a real merchant: its next request needs no database read', async () => {
    const real = { id: randomUUID(), key: 'the-key' };
    const { repo, reads } = merchants(real);
    const auth = new MerchantAuthService(repo, config, {} as RateLimitService);
    await expect(auth.authenticate(real.id, real.key)).resolves.toMatchObject({ id: real.id });
    for (let i = 0; i < 10_050; i++) await expect(auth.authenticate(randomUUID(), 'guess')).rejects.toThrow(/Authentication failed/);
    const readsOfReal = () => reads.filter((r) => r === real.id).length;
    expect(readsOfReal()).toBe(1);
    await expect(auth.authenticate(real.id, real.key)).resolves.toMatchObject({ id: real.id });
    expect(readsOfReal()).toBe(1);
  });

  it('an unknown id is remembered briefly: a repeat within the negative TTL is not read again, and is once it has passed', async () => {
    const real = { id: randomUUID(), key: 'k' };
    const { repo, reads } = merchants(real);
    const auth = new MerchantAuthService(repo, { ...config, merchantNegativeCacheMs: 50 }, {} as RateLimitService);
    const unknown = randomUUID();
    await expect(auth.authenticate(unknown, 'x')).rejects.toThrow();
    await expect(auth.authenticate(unknown, 'x')).rejects.toThrow();
    expect(reads.filter((r) => r === unknown)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 80));
    await expect(auth.authenticate(unknown, 'x')).rejects.toThrow();
    expect(reads.filter((r) => r === unknown)).toHaveLength(2);
  });
});
