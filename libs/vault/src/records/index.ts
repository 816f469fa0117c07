// Card records at rest: envelope encryption and keyed fingerprints (tokenizer and cli only).
export * from './record-cipher';
export * from './card-record';
export * from './fingerprint';
