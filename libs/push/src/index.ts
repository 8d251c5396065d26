/** The public entry of `@lib/push`: the parts of webhook delivery that need no queue or database. */
export * from './backoff';
export * from './delivery-result';
export * from './destination-guard';
export * from './host-limiter';
export * from './push-allowlist';
export {
  RESERVED_RANGES,
  classifyAddress,
  type AddressRefusal,
  type ReservedRange,
} from './reserved-ranges';
export * from './webhook-sender';
