export * from './schedule';
export * from './charges';
export * from './rebill-facts';
export * from './rebill-view';
export * from './rebill-advance';
export * from './rebill-lifecycle';
export * from './rebill-runner';
export * from './rebill-plan';
