import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, routeHref, when } from './page';
import type { Quotas, Tenant } from './types';

/** A quota field of a form: empty means unset (no limit, or the platform's default). */
export function quotaValue(form: HTMLFormElement, name: string): number | undefined {
  const text = fieldText(form, name);
  return text === '' ? undefined : Number(text);
}

/** The platform's tenants (platform admins): list, create, suspend and resume. */
export class TenantsPage extends OperatorPage {
  static override properties = { tenants: { state: true } };

  declare tenants: Tenant[] | null;

  constructor() {
    super();
    this.tenants = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const page = await this.attempt('Loading tenants', () =>
      this.api.get<{ tenants: Tenant[] }>(adminPath(['tenants'])),
    );
    if (page) {
      this.tenants = page.tenants;
    }
  }

  private async create(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const quotas: Quotas = {};
    const rps = quotaValue(form, 'requestsPerSecond');
    const active = quotaValue(form, 'maxActiveTasks');
    if (rps !== undefined) {
      quotas.requestsPerSecond = rps;
    }
    if (active !== undefined) {
      quotas.maxActiveTasks = active;
    }
    const created = await this.attempt('Creating the tenant', () =>
      this.api.request<Tenant>('POST', adminPath(['tenants']), {
        tenantId: fieldText(form, 'tenantId'),
        displayName: fieldText(form, 'displayName'),
        ...(Object.keys(quotas).length > 0 ? { quotas } : {}),
      }),
    );
    if (created) {
      form.reset();
      await this.load();
    }
  }

  private async setStatus(tenant: Tenant, action: 'suspend' | 'resume'): Promise<void> {
    const changed = await this.attempt(
      `${action === 'suspend' ? 'Suspending' : 'Resuming'} ${tenant.tenantId}`,
      () => this.api.request<Tenant>('POST', adminPath(['tenants', tenant.tenantId, action])),
    );
    if (changed) {
      await this.load();
    }
  }

  override render(): TemplateResult {
    return html`<h1>Tenants</h1>
      ${this.feedback()} ${this.tenants ? this.table(this.tenants) : nothing}
      <form class="panel" @submit=${(event: SubmitEvent) => void this.create(event)}>
        <h2>Create a tenant</h2>
        <div class="row">
          <div>
            <label for="tenantId">Tenant id</label>
            <input
              id="tenantId"
              name="tenantId"
              required
              pattern="[a-z0-9][a-z0-9\\-]{0,62}"
              aria-describedby="tenantId-hint"
            />
          </div>
          <div>
            <label for="displayName">Display name</label>
            <input id="displayName" name="displayName" required maxlength="256" />
          </div>
          <div>
            <label for="requestsPerSecond">Requests per second (empty: no limit)</label>
            <input id="requestsPerSecond" name="requestsPerSecond" type="number" min="1" />
          </div>
          <div>
            <label for="maxActiveTasks">Most active tasks (empty: no limit)</label>
            <input id="maxActiveTasks" name="maxActiveTasks" type="number" min="1" />
          </div>
          <button type="submit">Create tenant</button>
        </div>
        <p id="tenantId-hint" class="muted">Lower-case letters, digits and dashes.</p>
      </form>`;
  }

  private table(tenants: readonly Tenant[]): TemplateResult {
    return html`<table>
      <caption class="visually-hidden">
        Tenants
      </caption>
      <thead>
        <tr>
          <th scope="col">Tenant</th>
          <th scope="col">Name</th>
          <th scope="col">Status</th>
          <th scope="col">Quotas</th>
          <th scope="col">Created</th>
          <th scope="col">Actions</th>
        </tr>
      </thead>
      <tbody>
        ${tenants.map(
          (tenant) =>
            html`<tr>
              <td><a href=${routeHref(['tenants', tenant.tenantId])}>${tenant.tenantId}</a></td>
              <td>${tenant.displayName}</td>
              <td class="state-${tenant.status}">${tenant.status}</td>
              <td>${quotaText(tenant.quotas)}</td>
              <td>${when(tenant.createdAt)}</td>
              <td class="actions">
                ${tenant.status === 'active'
                  ? html`<button
                      type="button"
                      class="danger"
                      aria-label="Suspend ${tenant.tenantId}"
                      @click=${() => void this.setStatus(tenant, 'suspend')}
                    >
                      Suspend
                    </button>`
                  : html`<button
                      type="button"
                      aria-label="Resume ${tenant.tenantId}"
                      @click=${() => void this.setStatus(tenant, 'resume')}
                    >
                      Resume
                    </button>`}
              </td>
            </tr>`,
        )}
      </tbody>
    </table>`;
  }
}

/** Quotas in words. */
export function quotaText(quotas: Quotas | undefined): string {
  const rps = quotas?.requestsPerSecond;
  const active = quotas?.maxActiveTasks;
  return `${rps === undefined ? 'no rate limit' : rps === null ? 'default rate' : `${rps} req/s`}, ${
    active === undefined
      ? 'no task limit'
      : active === null
        ? 'default task limit'
        : `${active} active tasks`
  }`;
}

customElements.define('a2a-op-tenants', TenantsPage);
