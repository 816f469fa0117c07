/** The notifier's Redis connection for the delivery queue (BullMQ's, which its worker duplicates). */
export const REDIS = Symbol('REDIS');

/**
 * The connection of the attempts' own Redis calls: the merchants' slots and the listeners'
 * throttle buckets, two or more calls an attempt. Auto-pipelined: the calls made in one turn of the
 * event loop go out in one write, which under load is most of the notifier's system-call time. Kept
 * apart from the queue's connection, which BullMQ uses as it expects (not pipelined).
 */
export const SLOTS_REDIS = Symbol('SLOTS_REDIS');
