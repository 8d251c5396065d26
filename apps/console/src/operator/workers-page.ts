import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, routeHref, when } from './page';
import { count, record, records, text, textOrNull, type Json } from './parse';

interface Lease {
  taskId: string;
  leaseEpoch: number | null;
  expiresAt: string | null;
}

interface ConnectedWorker {
  sessionId: string;
  agentId: string;
  identity: string;
  replicaId: string;
  capacity: number | null;
  inFlight: number | null;
  leases: Lease[];
  connectedAt: string | null;
  lastHeartbeatAt: string | null;
  lastSeenAt: string | null;
  stale: boolean;
}

function connectedWorker(value: Json): ConnectedWorker {
  return {
    sessionId: text(value['sessionId']),
    agentId: text(value['agentId']),
    identity: text(value['identity']),
    replicaId: text(value['replicaId']),
    capacity: count(value['capacity']),
    inFlight: count(value['inFlight']),
    leases: records(value['leases']).map((lease) => ({
      taskId: text(lease['taskId']),
      leaseEpoch: count(lease['leaseEpoch']),
      expiresAt: textOrNull(lease['expiresAt']),
    })),
    connectedAt: textOrNull(value['connectedAt']),
    lastHeartbeatAt: textOrNull(value['lastHeartbeatAt']),
    lastSeenAt: textOrNull(value['lastSeenAt']),
    stale: value['stale'] === true,
  };
}

/** The worker sessions connected to a tenant's agents: capacity, leases in flight and the leases held. */
export class WorkersPage extends OperatorPage {
  static override properties = { workers: { state: true }, agentId: { state: true } };

  declare workers: ConnectedWorker[] | null;
  declare agentId: string;

  constructor() {
    super();
    this.workers = null;
    this.agentId = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private async load(): Promise<void> {
    const page = await this.attempt('Loading connected workers', () =>
      this.api.get<unknown>(
        adminPath(['tenants', this.tenantId, 'workers'], { agentId: this.agentId }),
      ),
    );
    if (page !== undefined) {
      this.workers = records(record(page)['workers']).map(connectedWorker);
    }
  }

  private applyFilter(event: SubmitEvent): void {
    event.preventDefault();
    this.agentId = fieldText(event.target as HTMLFormElement, 'agentId');
    void this.load();
  }

  override render(): TemplateResult {
    return html`<div class="toolbar">
        <h1>Workers of ${this.tenantId}</h1>
        <button type="button" class="secondary" @click=${() => void this.load()}>Refresh</button>
      </div>
      <form class="panel" @submit=${(event: SubmitEvent) => this.applyFilter(event)}>
        <div class="row">
          <div>
            <label for="agentId">Agent</label>
            <input id="agentId" name="agentId" .value=${this.agentId} />
          </div>
          <button type="submit">Filter</button>
        </div>
      </form>
      ${this.feedback()} ${this.workers ? this.table(this.workers) : nothing}`;
  }

  private table(workers: readonly ConnectedWorker[]): TemplateResult {
    if (workers.length === 0) {
      return html`<p>No workers connected.</p>`;
    }
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          Connected workers
        </caption>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Agent</th>
            <th scope="col">Identity</th>
            <th scope="col">Replica</th>
            <th scope="col">In flight / capacity</th>
            <th scope="col">Leases</th>
            <th scope="col">Connected</th>
            <th scope="col">Last heartbeat</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          ${workers.map(
            (worker) =>
              html`<tr>
                <td><code>${worker.sessionId}</code></td>
                <td>${worker.agentId}</td>
                <td>${worker.identity}</td>
                <td>${worker.replicaId}</td>
                <td>${worker.inFlight ?? '?'} / ${worker.capacity ?? '?'}</td>
                <td>
                  ${worker.leases.length === 0
                    ? '—'
                    : html`<ul>
                        ${worker.leases.map(
                          (lease) =>
                            html`<li>
                              <a
                                href=${routeHref(['tenants', this.tenantId, 'tasks', lease.taskId])}
                                aria-label="Task ${lease.taskId}"
                                >${lease.taskId.slice(0, 8)}…</a
                              >
                              epoch ${lease.leaseEpoch ?? '?'}, until ${when(lease.expiresAt)}
                            </li>`,
                        )}
                      </ul>`}
                </td>
                <td>${when(worker.connectedAt)}</td>
                <td>${when(worker.lastHeartbeatAt)}</td>
                <td class=${worker.stale ? 'state-dead' : 'state-active'}>
                  ${worker.stale ? `stale (last seen ${when(worker.lastSeenAt)})` : 'connected'}
                </td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('a2a-op-workers', WorkersPage);
