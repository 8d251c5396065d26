import { html, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';

/** What the import form asks the admin API for (`POST …/agents/{agentId}/import`). */
export interface ImportRequest {
  agentId: string;
  body: { cardUrl: string; headers?: Record<string, string>; binding?: string };
}

/**
 * The form that imports an existing A2A server as an agent of the tenant: its card's URL, the binding (the
 * first one its card lists when not chosen) and headers sent upstream, one `Name: value` per line.
 */
export function importForm(submit: (event: SubmitEvent) => void): TemplateResult {
  return html`<form class="panel" @submit=${submit}>
    <h2>Import from an A2A server</h2>
    <div class="row">
      <div>
        <label for="importAgentId">Agent id</label>
        <input id="importAgentId" name="agentId" required pattern="[^\\/\\s]{1,128}" />
      </div>
      <div>
        <label for="binding">Binding</label>
        <select id="binding" name="binding">
          <option value="">The first one its card lists</option>
          <option value="JSONRPC">JSON-RPC</option>
          <option value="HTTP+JSON">HTTP+JSON</option>
          <option value="GRPC">gRPC</option>
        </select>
      </div>
    </div>
    <label for="cardUrl">Agent card URL</label>
    <input
      id="cardUrl"
      name="cardUrl"
      type="url"
      required
      size="60"
      placeholder="https://agent.example/.well-known/agent-card.json"
    />
    <label for="headers"
      >Headers sent to it (one "Name: value" a line; stored sealed, never shown)</label
    >
    <textarea id="headers" name="headers" class="short" autocomplete="off"></textarea>
    <button type="submit">Import agent</button>
  </form>`;
}

/** The import the form asks for; throws, naming the line, on a header line without a colon. */
export function readImportForm(form: HTMLFormElement): ImportRequest {
  const headers: Record<string, string> = {};
  const lines = fieldText(form, 'headers')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  for (const [n, line] of lines.entries()) {
    const colon = line.indexOf(':');
    if (colon <= 0) {
      throw new Error(`header line ${n + 1} is not "Name: value"`);
    }
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  const binding = fieldText(form, 'binding');
  return {
    agentId: fieldText(form, 'agentId'),
    body: {
      cardUrl: fieldText(form, 'cardUrl'),
      ...(lines.length > 0 ? { headers } : {}),
      ...(binding !== '' ? { binding } : {}),
    },
  };
}
