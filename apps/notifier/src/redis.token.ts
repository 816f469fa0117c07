/** The notifier's Redis connection (the delivery queue's, also the listeners' throttle buckets'). */
export const REDIS = Symbol('REDIS');
