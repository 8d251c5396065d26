import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { expiryOf } from './api-keys-page';
import { adminPath, OperatorPage, when } from './page';
import './secret-once';
import type { AdminKey, Issued } from './types';

/** The platform's admin keys (platform admins): issue (the secret shown once), list, revoke. */
export class AdminKeysPage extends OperatorPage {
  static override properties = { keys: { state: true }, issued: { state: true } };

  declare keys: AdminKey[] | null;
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
    const page = await this.attempt('Loading admin keys', () =>
      this.api.get<{ adminKeys: AdminKey[] }>(adminPath(['admin-keys'])),
    );
    if (page) {
      this.keys = page.adminKeys;
    }
  }

  private async issue(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const label = fieldText(form, 'label');
    const issued = await this.attempt('Issuing the admin key', () =>
      this.api.request<Issued<AdminKey>>('POST', adminPath(['admin-keys']), {
        principalId: fieldText(form, 'principalId'),
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

  private async revoke(key: AdminKey): Promise<void> {
    const revoked = await this.attempt(`Revoking ${key.keyId}`, () =>
      this.api.request<AdminKey>('DELETE', adminPath(['admin-keys', key.keyId])),
    );
    if (revoked) {
      await this.load();
    }
  }

  override render(): TemplateResult {
    const keys = this.keys;
    return html`<h1>Admin keys</h1>
      <p class="muted">Admin keys may do everything on every tenant.</p>
      ${this.feedback()}
      ${this.issued
        ? html`<a2a-op-secret
            .secret=${this.issued}
            .what=${'admin key'}
            @dismiss=${() => (this.issued = null)}
          ></a2a-op-secret>`
        : nothing}
      ${keys && keys.length === 0 ? html`<p>No admin keys yet.</p>` : nothing}
      ${keys && keys.length > 0
        ? html`<table>
            <caption class="visually-hidden">
              Admin keys
            </caption>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Principal</th>
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
                            aria-label="Revoke admin key ${key.keyId}"
                            @click=${() => void this.revoke(key)}
                          >
                            Revoke
                          </button>`}
                    </td>
                  </tr>`,
              )}
            </tbody>
          </table>`
        : nothing}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.issue(event)}>
        <h2>Issue an admin key</h2>
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
          <button type="submit">Issue admin key</button>
        </div>
      </form>`;
  }
}

customElements.define('a2a-op-admin-keys', AdminKeysPage);
