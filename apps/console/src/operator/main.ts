import { html, LitElement, type TemplateResult } from 'lit';
import { JsonClient } from '../shared/api';
import { CredentialSession, fieldText } from '../shared/session';
import { theme } from '../shared/theme';

interface TenantRow {
  tenantId: string;
  displayName: string;
  status: string;
}

/** The operator's face of the console: signed in with an admin credential, it drives the admin API. */
export class OperatorApp extends LitElement {
  static override styles = theme;
  static override properties = {
    tenants: { state: true },
    error: { state: true },
  };

  declare tenants: TenantRow[] | null;
  declare error: string | null;
  private readonly session = new CredentialSession('a2a-console.admin-token');
  private readonly api = new JsonClient(() => this.session.token);

  constructor() {
    super();
    this.tenants = null;
    this.error = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.session.token) {
      void this.load();
    }
  }

  private async load(): Promise<void> {
    try {
      const page = await this.api.get<{ tenants: TenantRow[] }>('/admin/v1/tenants');
      this.tenants = page.tenants;
      this.error = null;
    } catch (error) {
      this.session.signOut();
      this.tenants = null;
      this.error = error instanceof Error ? error.message : String(error);
    }
  }

  private signIn(event: SubmitEvent): void {
    event.preventDefault();
    this.session.signIn(fieldText(event.target as HTMLFormElement, 'token'));
    void this.load();
  }

  override render(): TemplateResult {
    if (!this.tenants) {
      return html`<main>
        <h1>Sign in to operate the platform</h1>
        <form @submit=${(event: SubmitEvent) => this.signIn(event)}>
          <label for="token">Admin credential</label>
          <input id="token" name="token" type="password" autocomplete="off" required size="48" />
          <button type="submit">Sign in</button>
        </form>
        ${this.error ? html`<p role="alert" class="error">${this.error}</p>` : null}
      </main>`;
    }
    return html`<main>
      <h1>Tenants</h1>
      <table>
        <thead>
          <tr>
            <th scope="col">Tenant</th>
            <th scope="col">Name</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          ${this.tenants.map(
            (tenant) =>
              html`<tr>
                <td>${tenant.tenantId}</td>
                <td>${tenant.displayName}</td>
                <td>${tenant.status}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </main>`;
  }
}

customElements.define('a2a-operator-app', OperatorApp);
