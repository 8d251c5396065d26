import { html, nothing, type TemplateResult } from 'lit';
import { agentForm, readAgentForm } from './agent-form';
import { importForm, readImportForm } from './import-form';
import { adminPath, OperatorPage, problemText, routeHref, when } from './page';
import type { Agent, ImportedAgent } from './types';

/** A tenant's agents: the list, and the form that defines a new one. */
export class AgentsPage extends OperatorPage {
  static override properties = {
    agents: { state: true },
    creating: { state: true },
    importing: { state: true },
  };

  declare agents: Agent[] | null;
  declare creating: boolean;
  declare importing: boolean;

  constructor() {
    super();
    this.agents = null;
    this.creating = false;
    this.importing = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const page = await this.attempt('Loading agents', () =>
      this.api.get<{ agents: Agent[] }>(adminPath(['tenants', this.tenantId, 'agents'])),
    );
    if (page) {
      this.agents = page.agents;
    }
  }

  private async create(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    let read: ReturnType<typeof readAgentForm>;
    try {
      read = readAgentForm(event.target as HTMLFormElement, null);
    } catch (error) {
      this.error = problemText(error);
      return;
    }
    const created = await this.attempt('Creating the agent', () =>
      this.api.request<Agent>(
        'PUT',
        adminPath(['tenants', this.tenantId, 'agents', read.agentId]),
        read.definition,
      ),
    );
    if (created) {
      location.hash = routeHref(['tenants', this.tenantId, 'agents', created.agentId]);
    }
  }

  private async import(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    let read: ReturnType<typeof readImportForm>;
    try {
      read = readImportForm(event.target as HTMLFormElement);
    } catch (error) {
      this.error = problemText(error);
      return;
    }
    const imported = await this.attempt('Importing the agent', () =>
      this.api.request<ImportedAgent>(
        'POST',
        adminPath(['tenants', this.tenantId, 'agents', read.agentId, 'import']),
        read.body,
      ),
    );
    if (imported) {
      location.hash = routeHref(['tenants', this.tenantId, 'agents', imported.agent.agentId]);
    }
  }

  override render(): TemplateResult {
    return html`<div class="toolbar">
        <h1>Agents of ${this.tenantId}</h1>
        <button
          type="button"
          class="secondary"
          aria-expanded=${String(this.creating)}
          @click=${() => (this.creating = !this.creating)}
        >
          New agent
        </button>
        <button
          type="button"
          class="secondary"
          aria-expanded=${String(this.importing)}
          @click=${() => (this.importing = !this.importing)}
        >
          Import from an A2A server
        </button>
      </div>
      ${this.feedback()}
      ${this.creating ? agentForm(null, (event) => void this.create(event)) : nothing}
      ${this.importing ? importForm((event) => void this.import(event)) : nothing}
      ${this.agents
        ? this.agents.length === 0
          ? html`<p>No agents yet.</p>`
          : html`<table>
              <caption class="visually-hidden">
                Agents
              </caption>
              <thead>
                <tr>
                  <th scope="col">Agent</th>
                  <th scope="col">Name</th>
                  <th scope="col">Version</th>
                  <th scope="col">Skills</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                ${this.agents.map(
                  (agent) =>
                    html`<tr>
                      <td>
                        <a href=${routeHref(['tenants', this.tenantId, 'agents', agent.agentId])}
                          >${agent.agentId}</a
                        >
                      </td>
                      <td>
                        ${agent.card.name}
                        ${agent.imported ? html`<span class="tag">imported</span>` : nothing}
                      </td>
                      <td>${agent.card.version}</td>
                      <td>
                        ${(agent.card.skills ?? []).map(
                          (skill) => html`<span class="tag">${skill.name ?? skill.id}</span>`,
                        )}
                      </td>
                      <td>${when(agent.updatedAt)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>`
        : nothing}`;
  }
}

customElements.define('a2a-op-agents', AgentsPage);
