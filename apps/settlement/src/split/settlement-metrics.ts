import { Counter } from 'prom-client';

export const settlementsSwept = new Counter({
  name: 'settlement_events_swept_total',
  help: 'Captures and cancels the settlement sweep settled from the outbox because their event never settled them (outcome=settled), or gave up on (outcome=given_up: a row that kept failing)',
  labelNames: ['outcome'],
});
