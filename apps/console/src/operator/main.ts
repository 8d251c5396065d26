import { css, html, LitElement, nothing, type TemplateResult } from 'lit';
import { keyed } from 'lit/directives/keyed.js';
import { JsonClient } from '../shared/api';
import { CredentialSession, fieldText } from '../shared/session';
import { theme } from '../shared/theme';
import './admin-keys-page';
import './agent-page';
import './agents-page';
import './api-keys-page';
import './audit-page';
import './deliveries-page';
import './oidc-issuers-page';
import { adminPath, problemText, routeHref } from './page';
import { record, textOrNull } from './parse';
import { parseRoute, TENANT_SECTIONS, type Route } from './route';
import './task-page';
import './tasks-page';
import './tenant-overview-page';
import './tenants-page';
import './workers-page';

/** Who signed in: a platform admin sees every tenant, a tenant admin (`tenant:admin` key) only its own. */
type Role = { kind: 'platform' } | { kind: 'tenant'; tenantId: string };

const shellStyles = css`
  header {
    display: flex;
    align-items: center;
    gap: 1rem;
    padding: 0.6rem 1.2rem;
    background: var(--accent);
    color: var(--accent-ink);
  }
  header .brand {
    font-weight: 700;
    font-size: 1.1rem;
    margin-right: auto;
  }
  header button {
    border-color: var(--accent-ink);
  }
  .layout {
    display: grid;
    grid-template-columns: 14rem minmax(0, 1fr);
    min-height: calc(100vh - 3rem);
  }
  nav {
    background: var(--panel);
    border-right: 1px solid var(--line);
    padding: 1rem 0.8rem;
  }
  nav h2 {
    font-size: 0.85rem;
    text-transform: uppercase;
    letter-spacing: 0.04em;
    color: var(--muted);
    margin: 1rem 0 0.3rem;
  }
  nav ul {
    list-style: none;
    margin: 0;
    padding: 0;
  }
  nav a {
    display: block;
    padding: 0.3rem 0.5rem;
    border-radius: 4px;
    color: var(--ink);
    text-decoration: none;
  }
  nav a:hover {
    text-decoration: underline;
  }
  nav a[aria-current='page'] {
    background: var(--accent);
    color: var(--accent-ink);
  }
  main {
    padding: 1rem 1.5rem 2rem;
  }
  main.sign-in {
    max-width: 40rem;
    margin: 3rem auto;
  }
`;

/** The operator's face of the console: signed in with an admin credential, it drives the admin API. */
export class OperatorApp extends LitElement {
  static override styles = [theme, shellStyles];
  static override properties = {
    who: { state: true },
    error: { state: true },
    checking: { state: true },
    route: { state: true },
  };

  declare who: Role | null;
  declare error: string | null;
  declare checking: boolean;
  declare route: Route;
  private readonly session = new CredentialSession('a2a-console.admin-token');
  private readonly api = new JsonClient(() => this.session.token);
  private readonly onHashChange = (): void => {
    this.route = parseRoute(location.hash);
  };

  constructor() {
    super();
    this.who = null;
    this.error = null;
    this.checking = false;
    this.route = parseRoute(location.hash);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    window.addEventListener('hashchange', this.onHashChange);
    if (this.session.token) {
      void this.identify();
    }
  }

  override disconnectedCallback(): void {
    window.removeEventListener('hashchange', this.onHashChange);
    super.disconnectedCallback();
  }

  /** Asks the admin API who the credential is (`GET /admin/v1/whoami`), which decides the face to show. */
  private async identify(): Promise<void> {
    this.checking = true;
    try {
      const who = record(await this.api.get<unknown>(adminPath(['whoami'])));
      const tenantId = textOrNull(who['tenantId']);
      if (who['role'] === 'tenant-admin' && tenantId !== null) {
        this.who = { kind: 'tenant', tenantId };
        if (this.route.page !== 'tenant' || this.route.tenantId !== tenantId) {
          location.hash = routeHref(['tenants', tenantId]);
          // Now, not at the hashchange event: the page is keyed by the hash and must not start on the old route.
          this.route = parseRoute(location.hash);
        }
      } else if (who['role'] === 'platform-admin') {
        this.who = { kind: 'platform' };
      } else {
        throw new Error(`The admin API named no role this console knows: ${JSON.stringify(who)}`);
      }
      this.error = null;
    } catch (error) {
      this.signOut();
      this.error = problemText(error);
    } finally {
      this.checking = false;
    }
  }

  private signIn(event: SubmitEvent): void {
    event.preventDefault();
    this.session.signIn(fieldText(event.target as HTMLFormElement, 'token'));
    void this.identify();
  }

  private signOut(): void {
    this.session.signOut();
    this.who = null;
  }

  override render(): TemplateResult {
    if (!this.who) {
      return this.signInView();
    }
    const role = this.who;
    return html`<header>
        <span class="brand">A2A platform console: operations</span>
        <span
          >${role.kind === 'platform' ? 'Platform admin' : `Tenant admin of ${role.tenantId}`}</span
        >
        <button type="button" @click=${() => this.signOut()}>Sign out</button>
      </header>
      <div class="layout">
        ${this.navigation(role)}
        <main>${keyed(location.hash, this.page(role))}</main>
      </div>`;
  }

  private signInView(): TemplateResult {
    const alert = this.error ? html`<p role="alert" class="error">${this.error}</p>` : nothing;
    const status = html`<p role="status" class="muted">
      ${this.checking ? 'Checking the credential…' : ''}
    </p>`;
    return html`<main class="sign-in">
      <h1>Sign in to operate the platform</h1>
      <form @submit=${(event: SubmitEvent) => this.signIn(event)}>
        <label for="token">Admin credential</label>
        <input id="token" name="token" type="password" autocomplete="off" required size="48" />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">
        The bootstrap token, an admin key, or a tenant API key with the scope tenant:admin. It is
        kept for this tab only.
      </p>
      ${alert} ${status}
    </main>`;
  }

  private navigation(role: Role): TemplateResult {
    const route = this.route;
    const tenantId =
      role.kind === 'tenant' ? role.tenantId : route.page === 'tenant' ? route.tenantId : null;
    const current = (active: boolean): string | typeof nothing => (active ? 'page' : nothing);
    return html`<nav aria-label="Console">
      ${role.kind === 'platform'
        ? html`<h2 id="nav-platform">Platform</h2>
            <ul aria-labelledby="nav-platform">
              <li>
                <a href="#/tenants" aria-current=${current(route.page === 'tenants')}>Tenants</a>
              </li>
              <li>
                <a href="#/admin-keys" aria-current=${current(route.page === 'admin-keys')}
                  >Admin keys</a
                >
              </li>
            </ul>`
        : nothing}
      ${tenantId !== null
        ? html`<h2 id="nav-tenant">Tenant ${tenantId}</h2>
            <ul aria-labelledby="nav-tenant">
              ${TENANT_SECTIONS.map(
                ([section, title]) =>
                  html`<li>
                    <a
                      href=${routeHref(['tenants', tenantId, section])}
                      aria-current=${current(
                        route.page === 'tenant' && route.section === section && !route.itemId,
                      )}
                      >${title}</a
                    >
                  </li>`,
              )}
            </ul>`
        : nothing}
    </nav>`;
  }

  private page(role: Role): TemplateResult {
    const route = this.route;
    const platformAdmin = role.kind === 'platform';
    switch (route.page) {
      case 'tenants':
        return platformAdmin
          ? html`<a2a-op-tenants .api=${this.api} .platformAdmin=${true}></a2a-op-tenants>`
          : this.notAllowed();
      case 'admin-keys':
        return platformAdmin
          ? html`<a2a-op-admin-keys .api=${this.api} .platformAdmin=${true}></a2a-op-admin-keys>`
          : this.notAllowed();
      case 'not-found':
        return html`<h1>No such page</h1>
          <p><a href="#/tenants">Back to the start</a></p>`;
      case 'tenant':
        return this.tenantPage(route, platformAdmin);
    }
  }

  private tenantPage(
    route: Extract<Route, { page: 'tenant' }>,
    platformAdmin: boolean,
  ): TemplateResult {
    const { tenantId } = route;
    switch (route.section) {
      case 'overview':
        return html`<a2a-op-tenant-overview
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
        ></a2a-op-tenant-overview>`;
      case 'agents':
        return route.itemId
          ? html`<a2a-op-agent
              .api=${this.api}
              .tenantId=${tenantId}
              .agentId=${route.itemId}
              .platformAdmin=${platformAdmin}
            ></a2a-op-agent>`
          : html`<a2a-op-agents
              .api=${this.api}
              .tenantId=${tenantId}
              .platformAdmin=${platformAdmin}
            ></a2a-op-agents>`;
      case 'tasks':
        return route.itemId
          ? html`<a2a-op-task
              .api=${this.api}
              .tenantId=${tenantId}
              .taskId=${route.itemId}
              .platformAdmin=${platformAdmin}
            ></a2a-op-task>`
          : html`<a2a-op-tasks
              .api=${this.api}
              .tenantId=${tenantId}
              .platformAdmin=${platformAdmin}
            ></a2a-op-tasks>`;
      case 'workers':
        return html`<a2a-op-workers
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
        ></a2a-op-workers>`;
      case 'api-keys':
        return html`<a2a-op-api-keys
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
        ></a2a-op-api-keys>`;
      case 'oidc-issuers':
        return html`<a2a-op-oidc-issuers
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
        ></a2a-op-oidc-issuers>`;
      case 'deliveries':
        return html`<a2a-op-deliveries
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
          .taskId=${route.itemId ?? ''}
        ></a2a-op-deliveries>`;
      case 'audit':
        return html`<a2a-op-audit
          .api=${this.api}
          .tenantId=${tenantId}
          .platformAdmin=${platformAdmin}
        ></a2a-op-audit>`;
    }
  }

  private notAllowed(): TemplateResult {
    return html`<h1>Platform admins only</h1>
      <p>This page needs a platform admin's credential.</p>`;
  }
}

customElements.define('a2a-operator-app', OperatorApp);
