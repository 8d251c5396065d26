/**
 * The public entry of `@lib/push`: the parts of webhook delivery that need no queue or database connection of
 * their own (the sender, its guard, verdicts, backoff), the lane jobs' contract, the operators' delivery
 * store, and the guarded fetch other tenant-chosen URLs go through.
 */
export * from './backoff';
export * from './delivery-result';
export * from './destination-guard';
export * from './guarded-fetch';
export * from './host-limiter';
export * from './lane-jobs';
export * from './push-allowlist';
export * from './push-delivery-store';
export {
  RESERVED_RANGES,
  classifyAddress,
  isLoopbackAddress,
  type AddressRefusal,
  type ReservedRange,
} from './reserved-ranges';
export * from './webhook-sender';
