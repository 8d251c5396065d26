import { html, nothing, type TemplateResult } from 'lit';
import type { Part } from './a2a-model';
import { a2uiMediaType } from './a2ui-host';
import { isObject } from './card-check';

/**
 * A part as the timeline shows it. Agent content is untrusted: text is text, a link is a link only to https,
 * inline bytes are described rather than shown, A2UI is rendered in the agent UI section.
 */
export function partView(part: Part): TemplateResult | typeof nothing {
  if (part.text !== undefined) {
    return html`<p class="part">${part.text}</p>`;
  }
  if (a2uiMediaType(part) !== null) {
    return html`<p class="part muted">${a2uiSummary(part.data)}</p>`;
  }
  if (part.url !== undefined) {
    const label = part.filename ?? part.url;
    return part.url.startsWith('https://')
      ? html`<p class="part">
          <a href=${part.url} rel="noopener noreferrer" target="_blank">${label}</a>
        </p>`
      : html`<p class="part">${label}</p>`;
  }
  if (part.raw !== undefined) {
    return html`<p class="part muted">
      File ${part.filename ?? ''} (${part.mediaType ?? 'unknown type'},
      ${Math.floor((part.raw.length * 3) / 4)} bytes)
    </p>`;
  }
  if (part.data !== undefined) {
    return html`<pre class="part">${JSON.stringify(part.data, null, 2)}</pre>`;
  }
  return nothing;
}

/** `A2UI action submit: {"name":"Ada"}` for a user's action, `Agent UI: createSurface form` for an agent's. */
function a2uiSummary(data: unknown): string {
  const messages: unknown[] = Array.isArray(data) ? data : [data];
  return messages
    .map((message) => {
      if (!isObject(message)) {
        return 'A2UI';
      }
      const action = message['action'];
      if (isObject(action)) {
        return `A2UI action ${String(action['name'])}: ${JSON.stringify(action['context'] ?? {})}`;
      }
      const kind = Object.keys(message).find((key) => key !== 'version') ?? 'message';
      const body = message[kind];
      const surface = isObject(body) ? body['surfaceId'] : undefined;
      return `Agent UI: ${kind}${typeof surface === 'string' ? ` ${surface}` : ''}`;
    })
    .join('; ');
}
