import { Counter } from 'prom-client';

export const settlementsSwept = new Counter({
  name: 'settlement_events_swept_total',
  help: 'Captures and cancels settled from the outbox by the settlement sweep because their event never settled them (lost with Redis, or out of retries)',
});
