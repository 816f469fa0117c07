// The vault table's SQL: the tokenizer's per-merchant reads and writes, and the cli's key passes.
export * from './token-cards.repository';
export * from './token-card-keys.repository';
