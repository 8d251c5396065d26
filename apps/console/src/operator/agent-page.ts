import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { agentForm, readAgentForm } from './agent-form';
import { adminPath, OperatorPage, problemText, when } from './page';
import './secret-once';
import type { Agent, ImportedAgent, Issued, Upstream, WorkerCredential } from './types';

/** One agent: its card as clients see its fields, its worker policy, its definition's form, its worker credentials. */
export class AgentPage extends OperatorPage {
  static override properties = {
    agentId: { attribute: false },
    agent: { state: true },
    credentials: { state: true },
    upstream: { state: true },
    synced: { state: true },
    issued: { state: true },
    editing: { state: true },
  };

  declare agentId: string;
  declare agent: Agent | null;
  declare credentials: WorkerCredential[] | null;
  declare upstream: Upstream | null;
  /** What the last "Read the card again" found. */
  declare synced: string | null;
  declare issued: string | null;
  declare editing: boolean;

  constructor() {
    super();
    this.agentId = '';
    this.agent = null;
    this.credentials = null;
    this.upstream = null;
    this.synced = null;
    this.issued = null;
    this.editing = false;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private get path(): string[] {
    return ['tenants', this.tenantId, 'agents', this.agentId];
  }

  private async load(): Promise<void> {
    const loaded = await this.attempt('Loading the agent', () =>
      Promise.all([
        this.api.get<Agent>(adminPath(this.path)),
        this.api.get<{ workerCredentials: WorkerCredential[] }>(
          adminPath([...this.path, 'worker-credentials']),
        ),
      ]),
    );
    if (loaded) {
      this.agent = loaded[0];
      this.credentials = loaded[1].workerCredentials;
      if (loaded[0].imported) {
        this.upstream =
          (await this.attempt('Loading the upstream', () =>
            this.api.get<Upstream>(adminPath([...this.path, 'upstream'])),
          )) ?? null;
      }
    }
  }

  private async sync(): Promise<void> {
    const synced = await this.attempt('Reading the card again', () =>
      this.api.request<ImportedAgent>('POST', adminPath([...this.path, 'sync'])),
    );
    if (synced) {
      this.agent = synced.agent;
      this.upstream = synced.upstream;
      this.synced = synced.changed
        ? 'The card changed: its new version is served.'
        : 'The card is unchanged.';
    }
  }

  private async save(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    let read: ReturnType<typeof readAgentForm>;
    try {
      read = readAgentForm(event.target as HTMLFormElement, this.agent);
    } catch (error) {
      this.error = problemText(error);
      return;
    }
    const saved = await this.attempt('Saving the agent', () =>
      this.api.request<Agent>('PUT', adminPath(this.path), read.definition),
    );
    if (saved) {
      this.agent = saved;
      this.editing = false;
    }
  }

  private async issue(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const label = fieldText(form, 'label');
    const issued = await this.attempt('Issuing a worker credential', () =>
      this.api.request<Issued<WorkerCredential>>(
        'POST',
        adminPath([...this.path, 'worker-credentials']),
        label === '' ? {} : { label },
      ),
    );
    if (issued) {
      form.reset();
      this.issued = issued.secret;
      await this.load();
    }
  }

  private async revoke(credential: WorkerCredential): Promise<void> {
    const revoked = await this.attempt(`Revoking ${credential.credentialId}`, () =>
      this.api.request<WorkerCredential>(
        'DELETE',
        adminPath([...this.path, 'worker-credentials', credential.credentialId]),
      ),
    );
    if (revoked) {
      await this.load();
    }
  }

  override render(): TemplateResult {
    const agent = this.agent;
    return html`<div class="toolbar">
        <h1>Agent ${this.agentId}</h1>
        ${agent
          ? html`<button
              type="button"
              class="secondary"
              aria-expanded=${String(this.editing)}
              @click=${() => (this.editing = !this.editing)}
            >
              Edit definition
            </button>`
          : nothing}
      </div>
      ${this.feedback()}
      ${agent && this.editing ? agentForm(agent, (event) => void this.save(event)) : nothing}
      ${agent ? this.card(agent) : nothing}
      ${this.upstream ? this.upstreamPanel(this.upstream) : nothing}
      ${this.credentials ? this.workerCredentials() : nothing}`;
  }

  private upstreamPanel(upstream: Upstream): TemplateResult {
    return html`<section class="panel" aria-labelledby="upstream">
      <div class="toolbar">
        <h2 id="upstream">Imported from an A2A server</h2>
        <button type="button" class="secondary" @click=${() => void this.sync()}>
          Read the card again
        </button>
      </div>
      <dl class="facts">
        <dt>Card</dt>
        <dd><code>${upstream.cardUrl}</code></dd>
        <dt>Called at</dt>
        <dd><code>${upstream.endpoint}</code> over ${upstream.binding}</dd>
        <dt>Streams</dt>
        <dd>${upstream.streaming ? 'yes' : 'no (polled)'}</dd>
        <dt>Card signature</dt>
        <dd>
          ${upstream.cardSigned ? (upstream.cardVerified ? 'verified' : 'not verified') : 'none'}
        </dd>
        <dt>Headers sent</dt>
        <dd>${upstream.headerNames.join(', ') || 'none'}</dd>
        <dt>Version</dt>
        <dd>${upstream.version}, read ${when(upstream.syncedAt)}</dd>
      </dl>
      ${this.synced ? html`<p role="status">${this.synced}</p>` : nothing}
    </section>`;
  }

  private card(agent: Agent): TemplateResult {
    const { card, policy } = agent;
    return html`<section class="panel" aria-labelledby="card">
        <h2 id="card">Card: ${card.name} ${card.version}</h2>
        <p>${card.description}</p>
        <dl class="facts">
          <dt>Input</dt>
          <dd>${(card.defaultInputModes ?? []).join(', ') || '—'}</dd>
          <dt>Output</dt>
          <dd>${(card.defaultOutputModes ?? []).join(', ') || '—'}</dd>
          <dt>Push notifications</dt>
          <dd>${card.pushNotifications ? 'yes' : 'no'}</dd>
          <dt>Updated</dt>
          <dd>${when(agent.updatedAt)}</dd>
        </dl>
        <h3>Skills</h3>
        ${(card.skills ?? []).length === 0
          ? html`<p class="muted">No skills.</p>`
          : html`<ul>
              ${(card.skills ?? []).map(
                (skill) =>
                  html`<li>
                    <strong>${skill.name ?? skill.id}</strong>: ${skill.description ?? ''}
                    ${(skill.tags ?? []).map((tag) => html`<span class="tag">${tag}</span>`)}
                  </li>`,
              )}
            </ul>`}
      </section>
      <section class="panel" aria-labelledby="policy">
        <h2 id="policy">Worker policy</h2>
        <dl class="facts">
          <dt>On a lost lease</dt>
          <dd>${policy.onLeaseLost ?? 'redispatch'}</dd>
          <dt>Most attempts</dt>
          <dd>${policy.maxAttempts ?? 3}</dd>
          <dt>Lease TTL</dt>
          <dd>${policy.leaseTtlMs ? `${policy.leaseTtlMs} ms` : 'default'}</dd>
          <dt>Most tasks leased at once</dt>
          <dd>${policy.maxConcurrency ?? 'no cap'}</dd>
        </dl>
      </section>`;
  }

  private workerCredentials(): TemplateResult {
    const credentials = this.credentials ?? [];
    return html`<section aria-labelledby="workers">
      <h2 id="workers">Worker credentials</h2>
      ${this.issued
        ? html`<a2a-op-secret
            .secret=${this.issued}
            .what=${'worker credential'}
            @dismiss=${() => (this.issued = null)}
          ></a2a-op-secret>`
        : nothing}
      ${credentials.length === 0
        ? html`<p class="muted">No worker credentials.</p>`
        : html`<table>
            <caption class="visually-hidden">
              Worker credentials
            </caption>
            <thead>
              <tr>
                <th scope="col">Credential</th>
                <th scope="col">Label</th>
                <th scope="col">Prefix</th>
                <th scope="col">Created</th>
                <th scope="col">Revoked</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              ${credentials.map(
                (credential) =>
                  html`<tr>
                    <td><code>${credential.credentialId}</code></td>
                    <td>${credential.label}</td>
                    <td><code>${credential.prefix}</code></td>
                    <td>${when(credential.createdAt)}</td>
                    <td class=${credential.revokedAt ? 'state-revoked' : ''}>
                      ${when(credential.revokedAt)}
                    </td>
                    <td class="actions">
                      ${credential.revokedAt
                        ? nothing
                        : html`<button
                            type="button"
                            class="danger"
                            aria-label="Revoke worker credential ${credential.credentialId}"
                            @click=${() => void this.revoke(credential)}
                          >
                            Revoke
                          </button>`}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.issue(event)}>
        <div class="row">
          <div>
            <label for="credentialLabel">Label</label>
            <input id="credentialLabel" name="label" maxlength="256" />
          </div>
          <button type="submit">Issue worker credential</button>
        </div>
      </form>
    </section>`;
  }
}

customElements.define('a2a-op-agent', AgentPage);
