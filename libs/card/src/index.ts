export * from './luhn';
export * from './brand';
export * from './mask';
export * from './expiry';
export * from './card-validation';
export * from './test-cards';
