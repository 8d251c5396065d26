import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, when } from './page';
import { DELIVERY_STATES, type PushDelivery, type PushDeliveryPage } from './types';

interface DeliveryFilter {
  task: string;
  state: string;
}

/** A tenant's webhook deliveries, newest first: filter by task and state (dead letters), page, redrive. */
export class DeliveriesPage extends OperatorPage {
  static override properties = {
    deliveries: { state: true },
    nextCursor: { state: true },
    taskId: { attribute: false },
    filter: { state: true },
    notice: { state: true },
  };

  /** The task whose deliveries are shown first (from the route); empty: all the tenant's. */
  declare taskId: string;
  declare deliveries: PushDelivery[] | null;
  declare nextCursor: string | undefined;
  declare filter: DeliveryFilter;
  declare notice: string;

  constructor() {
    super();
    this.taskId = '';
    this.deliveries = null;
    this.nextCursor = undefined;
    this.filter = { task: '', state: '' };
    this.notice = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.filter = { task: this.taskId, state: '' };
    void this.load(false);
  }

  private async load(more: boolean): Promise<void> {
    const query = {
      ...this.filter,
      ...(more && this.nextCursor ? { cursor: this.nextCursor } : {}),
    };
    const page = await this.attempt('Loading deliveries', () =>
      this.api.get<PushDeliveryPage>(
        adminPath(['tenants', this.tenantId, 'push-deliveries'], query),
      ),
    );
    if (page) {
      this.deliveries = more ? [...(this.deliveries ?? []), ...page.deliveries] : page.deliveries;
      this.nextCursor = page.nextCursor;
    }
  }

  private applyFilter(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    this.filter = { task: fieldText(form, 'task'), state: fieldText(form, 'state') };
    void this.load(false);
  }

  private showTask(taskId: string): void {
    this.filter = { ...this.filter, task: taskId };
    void this.load(false);
  }

  private async redrive(delivery: PushDelivery): Promise<void> {
    this.notice = '';
    const answer = await this.attempt(`Redriving ${delivery.deliveryId}`, () =>
      this.api.request<{ delivery: PushDelivery }>(
        'POST',
        adminPath(['tenants', this.tenantId, 'push-deliveries', delivery.deliveryId, 'redrive']),
      ),
    );
    if (answer) {
      this.notice = `Delivery ${answer.delivery.deliveryId} redriven: ${answer.delivery.state}, sent again from its first attempt.`;
      await this.load(false);
    }
  }

  override render(): TemplateResult {
    return html`<div class="toolbar">
        <h1>Webhook deliveries of ${this.tenantId}</h1>
        <button type="button" class="secondary" @click=${() => void this.load(false)}>
          Refresh
        </button>
      </div>
      <form class="panel" @submit=${(event: SubmitEvent) => this.applyFilter(event)}>
        <div class="row">
          <div>
            <label for="task">Task id</label>
            <input id="task" name="task" size="38" .value=${this.filter.task} />
          </div>
          <div>
            <label for="state">State</label>
            <select id="state" name="state">
              <option value="" ?selected=${this.filter.state === ''}>any</option>
              ${DELIVERY_STATES.map(
                (state) =>
                  html`<option value=${state} ?selected=${this.filter.state === state}>
                    ${state === 'dead' ? 'dead (dead letters)' : state}
                  </option>`,
              )}
            </select>
          </div>
          <button type="submit">Filter</button>
        </div>
      </form>
      ${this.feedback()}
      ${this.notice ? html`<p class="ok" role="status">${this.notice}</p>` : nothing}
      ${this.deliveries ? this.table(this.deliveries) : nothing}
      ${this.nextCursor
        ? html`<button type="button" class="secondary" @click=${() => void this.load(true)}>
            Load more
          </button>`
        : nothing}`;
  }

  private table(deliveries: readonly PushDelivery[]): TemplateResult {
    if (deliveries.length === 0) {
      return html`<p>No deliveries match.</p>`;
    }
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          Webhook deliveries
        </caption>
        <thead>
          <tr>
            <th scope="col">Delivery</th>
            <th scope="col">Task</th>
            <th scope="col">Webhook</th>
            <th scope="col">Generation</th>
            <th scope="col">State</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last answer</th>
            <th scope="col">Next try</th>
            <th scope="col">Created</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          ${deliveries.map(
            (delivery) =>
              html`<tr>
                <td><code>${delivery.deliveryId}</code></td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-label="Deliveries of task ${delivery.taskId}"
                    @click=${() => this.showTask(delivery.taskId)}
                  >
                    ${delivery.taskId.slice(0, 8)}…
                  </button>
                </td>
                <td>${delivery.configId}</td>
                <td>${delivery.generation}</td>
                <td class="state-${delivery.state}">${delivery.state}</td>
                <td>${delivery.attempts}</td>
                <td>
                  ${delivery.lastStatus ?? ''}
                  ${delivery.lastError ?? (delivery.lastStatus ? '' : '—')}
                </td>
                <td>${delivery.state === 'pending' ? when(delivery.nextAttemptAt) : '—'}</td>
                <td>${when(delivery.createdAt)}</td>
                <td class="actions">
                  ${delivery.state === 'dead'
                    ? html`<button
                        type="button"
                        aria-label="Redrive delivery ${delivery.deliveryId}"
                        @click=${() => void this.redrive(delivery)}
                      >
                        Redrive
                      </button>`
                    : nothing}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('a2a-op-deliveries', DeliveriesPage);
