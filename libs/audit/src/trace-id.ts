/** The trace id of a W3C `traceparent` header (the audit record's `traceId`), when well formed. */
export function traceIdOf(traceparent: string | undefined): string | null {
  return (
    /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent ?? '')?.[1] ?? null
  );
}
