// Sealing of payloads between the api and the tokenizer (JWE); the api's only use of the vault.
export * from './transit';
