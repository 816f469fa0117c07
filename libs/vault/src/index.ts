export * from './keyring';
export * from './transit';
export * from './record-cipher';
export * from './fingerprint';
export * from './secret-seal';
export * from './card-record';
