/**
 * The answer of a route that writes its response itself, as a stream (`text/event-stream`): the audit
 * interceptor starts it once the call's record is durable, so that nothing is sent before the record is.
 */
export class StreamingAnswer {
  constructor(readonly start: () => void) {}
}
