/**
 * Defensive readers of the admin API's answers with open-ended content (whoami, tasks with the A2A task as
 * stored, timelines, workers; shapes in test/e2e/console-api.e2e.spec.ts): a field missing or of another type
 * becomes a neutral value instead of an exception, so a newer API does not break an older console.
 */

export type Json = Record<string, unknown>;

export function record(value: unknown): Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Json)
    : {};
}

export function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.map(record) : [];
}

export function text(value: unknown): string {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '';
}

export function textOrNull(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

export function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** `TASK_STATE_INPUT_REQUIRED` → `input required`. */
export function stateText(state: string): string {
  return (
    state
      .replace(/^TASK_STATE_/, '')
      .replace(/_/g, ' ')
      .toLowerCase() || 'unknown'
  );
}

/** A2A parts (ProtoJSON) in words: text as is, data as JSON, files by name, type and size; never markup. */
export function partsText(parts: unknown): string {
  return records(parts)
    .map((part) => {
      if (typeof part['text'] === 'string') {
        return part['text'];
      }
      if ('data' in part) {
        return JSON.stringify(part['data']);
      }
      const name = text(part['filename']) || 'file';
      const type = text(part['mediaType']) || 'unknown type';
      if (typeof part['url'] === 'string') {
        return `[${name}, ${type}: ${part['url']}]`;
      }
      if (typeof part['raw'] === 'string') {
        return `[${name}, ${type}, ${Math.floor((part['raw'].length * 3) / 4)} bytes]`;
      }
      return `[${Object.keys(part).join(', ') || 'empty part'}]`;
    })
    .join('\n');
}
