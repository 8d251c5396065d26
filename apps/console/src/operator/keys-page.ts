import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, when } from './page';
import './secret-once';
import type { AdminKey, Issued } from './types';

/** What the two kinds of bearer keys (tenants' API keys, platform admin keys) have in common. */
export type KeyRow = AdminKey & { scopes?: string[] };

/** A `datetime-local` field as an ISO time (the browser's time zone), or nothing when empty. */
export function expiryOf(form: HTMLFormElement): { expiresAt?: string } {
  const text = fieldText(form, 'expiresAt');
  return text === '' ? {} : { expiresAt: new Date(text).toISOString() };
}

/**
 * A page of bearer keys: issue one (its secret shown once), list them by prefix, revoke one. Subclasses name the
 * kind of key, its collection in the admin API, and what more the issuing form asks for.
 */
export abstract class KeysPage<K extends KeyRow> extends OperatorPage {
  static override properties = { keys: { state: true }, issued: { state: true } };

  declare keys: K[] | null;
  declare issued: string | null;

  /** The kind of key, in running text: "API key". */
  protected abstract readonly noun: string;
  /** The keys' collection under `/admin/v1`. */
  protected abstract collection(): string[];
  /** The member of the list answer that holds the keys. */
  protected abstract readonly listMember: string;
  protected abstract heading(): string;
  /** More of the page above the list (an explanation), if any. */
  protected intro(): TemplateResult | typeof nothing {
    return nothing;
  }
  /** More fields of the issuing form, and what they add to the request. */
  protected extraFields(): TemplateResult | typeof nothing {
    return nothing;
  }
  protected extraRequest(_form: HTMLFormElement): Record<string, unknown> {
    return {};
  }

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
    const page = await this.attempt(`Loading ${this.noun}s`, () =>
      this.api.get<Record<string, K[]>>(adminPath(this.collection())),
    );
    if (page) {
      this.keys = page[this.listMember] ?? [];
    }
  }

  private async issue(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const label = fieldText(form, 'label');
    const issued = await this.attempt(`Issuing the ${this.noun}`, () =>
      this.api.request<Issued<K>>('POST', adminPath(this.collection()), {
        principalId: fieldText(form, 'principalId'),
        ...this.extraRequest(form),
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

  private async revoke(key: K): Promise<void> {
    const revoked = await this.attempt(`Revoking ${key.keyId}`, () =>
      this.api.request<K>('DELETE', adminPath([...this.collection(), key.keyId])),
    );
    if (revoked) {
      await this.load();
    }
  }

  override render(): TemplateResult {
    return html`<h1>${this.heading()}</h1>
      ${this.intro()} ${this.feedback()}
      ${this.issued
        ? html`<a2a-op-secret
            .secret=${this.issued}
            .what=${this.noun}
            @dismiss=${() => (this.issued = null)}
          ></a2a-op-secret>`
        : nothing}
      ${this.keys ? this.table(this.keys) : nothing}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.issue(event)}>
        <h2>Issue an ${this.noun}</h2>
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
        ${this.extraFields()}
        <button type="submit">Issue ${this.noun}</button>
      </form>`;
  }

  private table(keys: readonly K[]): TemplateResult {
    if (keys.length === 0) {
      return html`<p>No ${this.noun}s yet.</p>`;
    }
    const scoped = keys.some((key) => key.scopes !== undefined);
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          ${this.heading()}
        </caption>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Principal</th>
            ${scoped ? html`<th scope="col">Scopes</th>` : nothing}
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
                ${scoped
                  ? html`<td>
                      ${(key.scopes ?? []).map((scope) => html`<span class="tag">${scope}</span>`)}
                    </td>`
                  : nothing}
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
                        aria-label="Revoke ${this.noun} ${key.keyId}"
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
