import autocannon from 'autocannon';

export interface LoadShape {
  /** Closed loop (as fast as the server answers) when undefined; otherwise a fixed arrival rate, run by `runOpenLoop`. */
  rate?: number;
  connections: number;
  durationS: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
}

/**
 * One closed-loop autocannon run. `body` builds each request's JSON, so every request can carry a
 * distinct card. A fixed arrival rate is `runOpenLoop`'s job, not this one's.
 */
export function runLoad(url: string, shape: Pick<LoadShape, 'connections' | 'durationS'>, body: () => string): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url,
        connections: shape.connections,
        duration: shape.durationS,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (req) => ({ ...req, body: body() }),
          },
        ],
      },
      (err, r) => {
        if (err) return reject(err as Error);
        resolve({
          rps: r.requests.average,
          p50: r.latency.p50,
          p99: r.latency.p99,
          requests: r.requests.total,
          non2xx: r.non2xx,
          errors: r.errors + r.timeouts,
        });
      },
    );
  });
}
