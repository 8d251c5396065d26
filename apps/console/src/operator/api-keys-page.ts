import { html, type TemplateResult } from 'lit';
import { KeysPage } from './keys-page';
import { API_KEY_SCOPES, type ApiKey } from './types';

/** A tenant's API keys, with the scopes each grants. */
export class ApiKeysPage extends KeysPage<ApiKey> {
  protected readonly noun = 'API key';
  protected readonly listMember = 'apiKeys';

  protected collection(): string[] {
    return ['tenants', this.tenantId, 'api-keys'];
  }

  protected heading(): string {
    return `API keys of ${this.tenantId}`;
  }

  protected override extraFields(): TemplateResult {
    return html`<fieldset>
      <legend>Scopes (none chosen: the default A2A scopes)</legend>
      ${API_KEY_SCOPES.map(
        (scope) =>
          html`<label><input type="checkbox" name="scopes" value=${scope} />${scope}</label>`,
      )}
    </fieldset>`;
  }

  protected override extraRequest(form: HTMLFormElement): Record<string, unknown> {
    const scopes = new FormData(form).getAll('scopes').map(String);
    return scopes.length > 0 ? { scopes } : {};
  }
}

customElements.define('a2a-op-api-keys', ApiKeysPage);
