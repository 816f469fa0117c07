import { Counter, Gauge, Histogram } from 'prom-client';

export const httpRequests = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP request duration by route and status',
  labelNames: ['method', 'route', 'status'],
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
});

export const jobsProcessed = new Counter({
  name: 'jobs_processed_total',
  help: 'Jobs handled by this worker, by pattern and outcome',
  labelNames: ['pattern', 'outcome'],
});

const JOB_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** From a job's or event's enqueue to a worker taking it, first delivery only (a retry's wait is its backoff). */
export const jobWait = new Histogram({
  name: 'job_wait_seconds',
  help: 'Time a job or event waited in its queue before a worker took it (first delivery), by pattern',
  labelNames: ['pattern'],
  buckets: JOB_BUCKETS,
});

/** A job's or event's handling in this worker, by pattern: a sale's stage in the tokenizer, settlement, the notifier. */
export const jobDuration = new Histogram({
  name: 'job_duration_seconds',
  help: 'Time a worker spent handling a job or event, by pattern',
  labelNames: ['pattern'],
  buckets: JOB_BUCKETS,
});

/** Rows the retention passes deleted (or dropped with a partition), by table (docs/operations/retention.md). */
export const retentionRowsPruned = new Counter({
  name: 'retention_rows_pruned_total',
  help: 'Rows removed by the retention passes, by table (a dropped partition counts its rows)',
  labelNames: ['table'],
});

/** Requests this api process has received and not finished answering: what its replicas' load balancer and autoscaler see. */
export const httpInFlight = new Gauge({
  name: 'http_requests_in_flight',
  help: 'HTTP requests received and not yet answered (or abandoned by the caller)',
});

/** Requests sent to a worker whose reply this process is waiting for, by pattern: work the workers have not answered yet. */
export const replyWaits = new Gauge({
  name: 'queue_reply_waits',
  help: "Requests waiting for a worker's reply, by pattern",
  labelNames: ['pattern'],
});

/** Failed authentications, by surface (v1, console, admin, portal): unknown callers are counted here, not one audit row each. */
export const authFailures = new Counter({
  name: 'auth_failures_total',
  help: 'Failed authentications, by surface (v1, console, admin, portal)',
  labelNames: ['surface'],
});

/** Client addresses blocked for too many failed authentications (one per address, surface and window). */
export const authBlocked = new Counter({
  name: 'auth_blocked_total',
  help: 'Addresses blocked for too many failed authentications, by surface (once per address and window)',
  labelNames: ['surface'],
});

/** Portal requests refused because their link spent its budget, by what (opens, replays). */
export const portalLinkLimited = new Counter({
  name: 'portal_link_limited_total',
  help: 'Portal requests refused for a link over its budget, by what (opens, replays)',
  labelNames: ['what'],
});
