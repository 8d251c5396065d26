import type { AgentExtension } from '@lib/a2a-protocol';

/**
 * Our A2A extension for gap-free stream resumption (docs/extensions/resumable-streams.md). Every SSE event
 * carries `id: <task generation>`; a client that activates this extension and reconnects to SubscribeToTask
 * with `Last-Event-ID: <n>` receives exactly the events after generation n (no snapshot first), then live ones.
 */
export const RESUMABLE_STREAMS_URI = 'https://a2a-platform.dev/extensions/resumable-streams/v1';

export const RESUMABLE_STREAMS_EXTENSION: AgentExtension = {
  uri: RESUMABLE_STREAMS_URI,
  description:
    'SSE events carry id = task generation; SubscribeToTask with Last-Event-ID resumes after it with no gap and no duplicate.',
  required: false,
};

/** The extension URIs a request activates (`A2A-Extensions`, comma-separated; spec digest §10.2). */
export function requestedExtensions(header: string | undefined): string[] {
  return (header ?? '')
    .split(',')
    .map((uri) => uri.trim())
    .filter((uri) => uri.length > 0);
}

/** The generation a resuming client last saw, or null when the header is absent or not a generation. */
export function lastEventId(header: string | undefined): number | null {
  if (header === undefined || !/^\d{1,15}$/.test(header.trim())) {
    return null;
  }
  return Number(header.trim());
}
