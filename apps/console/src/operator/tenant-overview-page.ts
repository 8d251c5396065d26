import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, when } from './page';
import { quotaText, quotaValue } from './tenants-page';
import type { Quotas, Tenant, Usage } from './types';

function usageText(current: number | null | undefined, limit: number | null | undefined): string {
  const now =
    current === null || current === undefined ? 'unknown (Redis is away)' : String(current);
  return limit === null || limit === undefined ? `${now} (no limit)` : `${now} of ${limit}`;
}

/** One tenant: its status, quotas against its usage; platform admins suspend, resume and change quotas. */
export class TenantOverviewPage extends OperatorPage {
  static override properties = { tenant: { state: true }, usage: { state: true } };

  declare tenant: Tenant | null;
  declare usage: Usage | null;

  constructor() {
    super();
    this.tenant = null;
    this.usage = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const loaded = await this.attempt('Loading the tenant and its usage', () =>
      Promise.all([
        this.api.get<Tenant>(adminPath(['tenants', this.tenantId])),
        this.api.get<Usage>(adminPath(['tenants', this.tenantId, 'usage'])),
      ]),
    );
    if (loaded) {
      [this.tenant, this.usage] = loaded;
    }
  }

  private async setStatus(action: 'suspend' | 'resume'): Promise<void> {
    const changed = await this.attempt(action === 'suspend' ? 'Suspending' : 'Resuming', () =>
      this.api.request<Tenant>('POST', adminPath(['tenants', this.tenantId, action])),
    );
    if (changed) {
      this.tenant = changed;
    }
  }

  private async save(event: SubmitEvent): Promise<void> {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    // An empty field sends null: the platform's default for that quota.
    const quotas: Quotas = {
      requestsPerSecond: quotaValue(form, 'requestsPerSecond') ?? null,
      maxActiveTasks: quotaValue(form, 'maxActiveTasks') ?? null,
    };
    const changed = await this.attempt('Saving', () =>
      this.api.request<Tenant>('PATCH', adminPath(['tenants', this.tenantId]), {
        displayName: fieldText(form, 'displayName'),
        quotas,
      }),
    );
    if (changed) {
      this.tenant = changed;
      await this.load();
    }
  }

  override render(): TemplateResult {
    const tenant = this.tenant;
    return html`<div class="toolbar">
        <h1>Tenant ${this.tenantId}</h1>
        ${tenant && this.platformAdmin
          ? tenant.status === 'active'
            ? html`<button
                type="button"
                class="danger"
                @click=${() => void this.setStatus('suspend')}
              >
                Suspend tenant
              </button>`
            : html`<button type="button" @click=${() => void this.setStatus('resume')}>
                Resume tenant
              </button>`
          : nothing}
        <button type="button" class="secondary" @click=${() => void this.load()}>Refresh</button>
      </div>
      ${this.feedback()}
      ${tenant
        ? html`<section class="panel" aria-labelledby="facts">
            <h2 id="facts">Status and quotas</h2>
            <dl class="facts">
              <dt>Name</dt>
              <dd>${tenant.displayName}</dd>
              <dt>Status</dt>
              <dd class="state-${tenant.status}">${tenant.status}</dd>
              <dt>Status changed</dt>
              <dd>${when(tenant.statusChangedAt)}</dd>
              <dt>Created</dt>
              <dd>${when(tenant.createdAt)}</dd>
              <dt>Quotas</dt>
              <dd>${quotaText(tenant.quotas)}</dd>
            </dl>
          </section>`
        : nothing}
      ${this.usage
        ? html`<section class="panel" aria-labelledby="usage">
            <h2 id="usage">Usage</h2>
            <dl class="facts">
              <dt>Requests this second</dt>
              <dd>
                ${usageText(
                  this.usage.requestsPerSecond.current,
                  this.usage.requestsPerSecond.limit,
                )}
              </dd>
              <dt>Active tasks</dt>
              <dd>${usageText(this.usage.activeTasks.current, this.usage.activeTasks.limit)}</dd>
            </dl>
          </section>`
        : nothing}
      ${tenant && this.platformAdmin ? this.quotaForm(tenant) : nothing}`;
  }

  private quotaForm(tenant: Tenant): TemplateResult {
    return html`<form class="panel" @submit=${(event: SubmitEvent) => void this.save(event)}>
      <h2>Change name and quotas</h2>
      <div class="row">
        <div>
          <label for="displayName">Display name</label>
          <input id="displayName" name="displayName" required .value=${tenant.displayName} />
        </div>
        <div>
          <label for="requestsPerSecond">Requests per second (empty: default)</label>
          <input
            id="requestsPerSecond"
            name="requestsPerSecond"
            type="number"
            min="1"
            .value=${String(tenant.quotas.requestsPerSecond ?? '')}
          />
        </div>
        <div>
          <label for="maxActiveTasks">Most active tasks (empty: default)</label>
          <input
            id="maxActiveTasks"
            name="maxActiveTasks"
            type="number"
            min="1"
            .value=${String(tenant.quotas.maxActiveTasks ?? '')}
          />
        </div>
        <button type="submit">Save</button>
      </div>
    </form>`;
  }
}

customElements.define('a2a-op-tenant-overview', TenantOverviewPage);
