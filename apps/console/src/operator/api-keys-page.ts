import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, when } from './page';
import './secret-once';
import { API_KEY_SCOPES, type ApiKey, type Issued } from './types';

/** A `datetime-local` field as an ISO time (the browser's time zone), or nothing when empty. */
export function expiryOf(form: HTMLFormElement): { expiresAt?: string } {
  const text = fieldText(form, 'expiresAt');
  return text === '' ? {} : { expiresAt: new Date(text).toISOString() };
}

/** A tenant's API keys: issue (the secret shown once), list by prefix, revoke. */
export class ApiKeysPage extends OperatorPage {
  static override properties = { keys: { state: true }, issued: { state: true } };

  declare keys: ApiKey[] | null;
  declare issued: string | null;

  constructor() {
    super();
    this.keys = null;
    this.issued = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const page = await this.attempt('Loading API keys', () =>
      this.api.get<{ apiKeys: ApiKey[] }>(adminPath(['tenants', this.tenantId, 'api-keys'])),
    );
    if (page) {
      this.keys = page.apiKeys;
    }
  }

  private async issue(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const scopes = new FormData(form).getAll('scopes').map(String);
    const label = fieldText(form, 'label');
    const issued = await this.attempt('Issuing the API key', () =>
      this.api.request<Issued<ApiKey>>('POST', adminPath(['tenants', this.tenantId, 'api-keys']), {
        principalId: fieldText(form, 'principalId'),
        ...(scopes.length > 0 ? { scopes } : {}),
        ...(label === '' ? {} : { label }),
        ...expiryOf(form),
      }),
    );
    if (issued) {
      form.reset();
      this.issued = issued.secret;
      await this.load();
    }
  }

  private async revoke(key: ApiKey): Promise<void> {
    const revoked = await this.attempt(`Revoking ${key.keyId}`, () =>
      this.api.request<ApiKey>(
        'DELETE',
        adminPath(['tenants', this.tenantId, 'api-keys', key.keyId]),
      ),
    );
    if (revoked) {
      await this.load();
    }
  }

  override render(): TemplateResult {
    return html`<h1>API keys of ${this.tenantId}</h1>
      ${this.feedback()}
      ${this.issued
        ? html`<a2a-op-secret
            .secret=${this.issued}
            .what=${'API key'}
            @dismiss=${() => (this.issued = null)}
          ></a2a-op-secret>`
        : nothing}
      ${this.keys ? this.table(this.keys) : nothing}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.issue(event)}>
        <h2>Issue an API key</h2>
        <div class="row">
          <div>
            <label for="principalId">Principal id</label>
            <input id="principalId" name="principalId" required />
          </div>
          <div>
            <label for="label">Label</label>
            <input id="label" name="label" maxlength="256" />
          </div>
          <div>
            <label for="expiresAt">Expires (empty: never)</label>
            <input id="expiresAt" name="expiresAt" type="datetime-local" />
          </div>
        </div>
        <fieldset>
          <legend>Scopes (none chosen: the default A2A scopes)</legend>
          ${API_KEY_SCOPES.map(
            (scope) =>
              html`<label><input type="checkbox" name="scopes" value=${scope} />${scope}</label>`,
          )}
        </fieldset>
        <button type="submit">Issue API key</button>
      </form>`;
  }

  private table(keys: readonly ApiKey[]): TemplateResult {
    if (keys.length === 0) {
      return html`<p>No API keys yet.</p>`;
    }
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          API keys
        </caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Principal</th>
            <th scope="col">Scopes</th>
            <th scope="col">Label</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Expires</th>
            <th scope="col">State</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${keys.map(
            (key) =>
              html`<tr>
                <td><code>${key.keyId}</code></td>
                <td>${key.principalId}</td>
                <td>${key.scopes.map((scope) => html`<span class="tag">${scope}</span>`)}</td>
                <td>${key.label}</td>
                <td><code>${key.prefix}</code></td>
                <td>${when(key.createdAt)}</td>
                <td>${when(key.expiresAt)}</td>
                <td class=${key.revokedAt ? 'state-revoked' : 'state-active'}>
                  ${key.revokedAt ? `revoked ${when(key.revokedAt)}` : 'active'}
                </td>
                <td class="actions">
                  ${key.revokedAt
                    ? nothing
                    : html`<button
                        type="button"
                        class="danger"
                        aria-label="Revoke API key ${key.keyId}"
                        @click=${() => void this.revoke(key)}
                      >
                        Revoke
                      </button>`}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('a2a-op-api-keys', ApiKeysPage);
