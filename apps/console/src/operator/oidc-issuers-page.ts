import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, problemText, when } from './page';
import type { OidcIssuer } from './types';

/** A tenant's OIDC issuers: list, define (or replace, same id), remove. */
export class OidcIssuersPage extends OperatorPage {
  static override properties = { issuers: { state: true } };

  declare issuers: OidcIssuer[] | null;

  constructor() {
    super();
    this.issuers = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const page = await this.attempt('Loading OIDC issuers', () =>
      this.api.get<{ issuers: OidcIssuer[] }>(
        adminPath(['tenants', this.tenantId, 'oidc-issuers']),
      ),
    );
    if (page) {
      this.issuers = page.issuers;
    }
  }

  private async define(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    let scopeMap: unknown;
    try {
      scopeMap = JSON.parse(fieldText(form, 'scopeMap') || '{}');
    } catch (error) {
      this.error = `The scope map is not JSON: ${problemText(error)}`;
      return;
    }
    const optional = (name: string): Record<string, string> => {
      const value = fieldText(form, name);
      return value === '' ? {} : { [name]: value };
    };
    const defined = await this.attempt('Saving the issuer', () =>
      this.api.request<OidcIssuer>(
        'PUT',
        adminPath(['tenants', this.tenantId, 'oidc-issuers', fieldText(form, 'issuerId')]),
        {
          issuer: fieldText(form, 'issuer'),
          audience: fieldText(form, 'audience'),
          jwksUrl: fieldText(form, 'jwksUrl'),
          ...optional('principalClaim'),
          ...optional('scopesClaim'),
          scopeMap,
        },
      ),
    );
    if (defined) {
      form.reset();
      await this.load();
    }
  }

  private async removeIssuer(issuer: OidcIssuer): Promise<void> {
    await this.attempt(`Removing ${issuer.issuerId}`, () =>
      this.api.request<null>(
        'DELETE',
        adminPath(['tenants', this.tenantId, 'oidc-issuers', issuer.issuerId]),
      ),
    );
    await this.load();
  }

  override render(): TemplateResult {
    const issuers = this.issuers;
    return html`<h1>OIDC issuers of ${this.tenantId}</h1>
      ${this.feedback()}
      ${issuers && issuers.length === 0
        ? html`<p>No OIDC issuers: clients sign in with API keys.</p>`
        : nothing}
      ${issuers && issuers.length > 0
        ? html`<div class="scroll">
            <table>
              <caption class="visually-hidden">
                OIDC issuers
              </caption>
              <thead>
                <tr>
                  <th scope="col">Id</th>
                  <th scope="col">Issuer</th>
                  <th scope="col">Audience</th>
                  <th scope="col">JWKS URL</th>
                  <th scope="col">Claims</th>
                  <th scope="col">Scope map</th>
                  <th scope="col">Created</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                ${issuers.map(
                  (issuer) =>
                    html`<tr>
                      <td>${issuer.issuerId}</td>
                      <td>${issuer.issuer}</td>
                      <td>${issuer.audience}</td>
                      <td>${issuer.jwksUrl}</td>
                      <td>
                        principal: ${issuer.principalClaim ?? 'sub'}, scopes:
                        ${issuer.scopesClaim ?? 'scope'}
                      </td>
                      <td><code>${JSON.stringify(issuer.scopeMap ?? {})}</code></td>
                      <td>${when(issuer.createdAt)}</td>
                      <td class="actions">
                        <button
                          type="button"
                          class="danger"
                          aria-label="Remove issuer ${issuer.issuerId}"
                          @click=${() => void this.removeIssuer(issuer)}
                        >
                          Remove
                        </button>
                      </td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
        : nothing}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.define(event)}>
        <h2>Define an issuer (an existing id is replaced)</h2>
        <div class="row">
          <div>
            <label for="issuerId">Issuer id</label>
            <input id="issuerId" name="issuerId" required />
          </div>
          <div>
            <label for="issuer">Issuer (exact iss)</label>
            <input id="issuer" name="issuer" type="url" required size="32" />
          </div>
          <div>
            <label for="audience">Audience</label>
            <input id="audience" name="audience" required />
          </div>
          <div>
            <label for="jwksUrl">JWKS URL</label>
            <input id="jwksUrl" name="jwksUrl" type="url" required size="32" />
          </div>
          <div>
            <label for="principalClaim">Principal claim (empty: sub)</label>
            <input id="principalClaim" name="principalClaim" />
          </div>
          <div>
            <label for="scopesClaim">Scopes claim (empty: scope)</label>
            <input id="scopesClaim" name="scopesClaim" />
          </div>
        </div>
        <label for="scopeMap">Scope map (JSON: issuer scope → platform scopes)</label>
        <textarea
          id="scopeMap"
          name="scopeMap"
          class="short"
          spellcheck="false"
          placeholder='{"agents.use": ["a2a:message:send", "a2a:tasks:read"]}'
        ></textarea>
        <button type="submit">Save issuer</button>
      </form>`;
  }
}

customElements.define('a2a-op-oidc-issuers', OidcIssuersPage);
