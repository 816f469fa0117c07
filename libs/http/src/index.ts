// The HTTP edge both web apps (the api and the console) share: the wire's error shape and its
// exception filter, the strict JSON body parser, the request hooks, and the Redis-backed limits
// (merchant budgets, failed authentication, portal links).
export * from './edge-config';
export * from './wire-error';
export * from './http-exception.filter';
export * from './json-body';
export * from './rate-limit.service';
export * from './auth-limits.service';
export * from './edge-hooks';
