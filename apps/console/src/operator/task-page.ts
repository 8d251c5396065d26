import { html, nothing, type TemplateResult } from 'lit';
import { adminPath, OperatorPage, routeHref, when } from './page';
import { count, partsText, record, records, stateText, text, textOrNull, type Json } from './parse';

interface TimelineEntry {
  generation: number | null;
  type: string;
  recordedAt: string | null;
  actor: string;
  principal: string;
  binding: string;
  traceId: string | null;
  summary: string;
}

/** Summary fields that are times, shown like every other time of the console. */
const TIME_FIELDS: ReadonlySet<string> = new Set(['expiresAt', 'deadline']);

/**
 * An entry of `…/tasks/{taskId}/events`: the actor is a caller (its principal), an agent worker (its
 * session) or a task-service replica; the summary's fields are typed, never message or artifact content.
 */
function timelineEntry(value: Json): TimelineEntry {
  const actor = record(value['actor']);
  return {
    generation: count(value['generation']),
    type: text(value['type']),
    recordedAt: textOrNull(value['recordedAt']),
    actor: `${text(actor['kind'])} ${text(actor['id'])}`.trim() || '—',
    principal: textOrNull(value['principalId']) ?? '—',
    binding: textOrNull(value['binding']) ?? '—',
    traceId: textOrNull(value['traceId']),
    summary: Object.entries(record(value['summary']))
      .map(([key, item]) => {
        const shown = TIME_FIELDS.has(key)
          ? when(textOrNull(item))
          : typeof item === 'string'
            ? item
            : JSON.stringify(item);
        return `${key}: ${shown}`;
      })
      .join(', '),
  };
}

/** One task as the operator sees it: status, work queue row, history, artifacts and its event timeline. */
export class TaskPage extends OperatorPage {
  static override properties = {
    taskId: { attribute: false },
    detail: { state: true },
    timeline: { state: true },
    nextAfter: { state: true },
  };

  declare taskId: string;
  declare detail: Json | null;
  declare timeline: TimelineEntry[] | null;
  declare nextAfter: number | null;

  constructor() {
    super();
    this.taskId = '';
    this.detail = null;
    this.timeline = null;
    this.nextAfter = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load();
  }

  private get path(): string[] {
    return ['tenants', this.tenantId, 'tasks', this.taskId];
  }

  private async load(): Promise<void> {
    const loaded = await this.attempt('Loading the task and its timeline', () =>
      Promise.all([
        this.api.get<unknown>(adminPath(this.path)),
        this.api.get<unknown>(adminPath([...this.path, 'events'])),
      ]),
    );
    if (loaded) {
      this.detail = record(loaded[0]);
      this.timeline = records(record(loaded[1])['events']).map(timelineEntry);
      this.nextAfter = count(record(loaded[1])['nextAfter']);
    }
  }

  private async more(): Promise<void> {
    const after = this.nextAfter;
    if (after === null) {
      return;
    }
    const page = await this.attempt('Loading more events', () =>
      this.api.get<unknown>(adminPath([...this.path, 'events'], { after: String(after) })),
    );
    if (page !== undefined) {
      this.timeline = [
        ...(this.timeline ?? []),
        ...records(record(page)['events']).map(timelineEntry),
      ];
      this.nextAfter = count(record(page)['nextAfter']);
    }
  }

  override render(): TemplateResult {
    const detail = this.detail;
    return html`<div class="toolbar">
        <h1>Task <code>${this.taskId}</code></h1>
        <a href=${routeHref(['tenants', this.tenantId, 'deliveries', this.taskId])}
          >Webhook deliveries of this task</a
        >
        <button type="button" class="secondary" @click=${() => void this.load()}>Refresh</button>
      </div>
      ${this.feedback()} ${detail ? this.summary(detail) : nothing}
      ${detail ? this.conversation(record(detail['task'])) : nothing}
      ${this.timeline ? this.events(this.timeline) : nothing}`;
  }

  private summary(detail: Json): TemplateResult {
    const task = record(detail['task']);
    const status = record(task['status']);
    const work = detail['work'] === null ? null : record(detail['work']);
    const statusMessage = partsText(record(status['message'])['parts']);
    return html`<section class="panel" aria-labelledby="status">
      <h2 id="status">Status: ${stateText(text(status['state']) || text(detail['state']))}</h2>
      ${statusMessage ? html`<p>${statusMessage}</p>` : nothing}
      <dl class="facts">
        <dt>Agent</dt>
        <dd>${text(detail['agentId']) || '—'}</dd>
        <dt>Owner</dt>
        <dd>${text(detail['ownerId']) || '—'}</dd>
        <dt>Context</dt>
        <dd><code>${text(detail['contextId']) || text(task['contextId'])}</code></dd>
        <dt>Status time</dt>
        <dd>${when(textOrNull(status['timestamp']) ?? textOrNull(detail['statusTimestamp']))}</dd>
        <dt>Version</dt>
        <dd>${count(detail['version']) ?? '—'}</dd>
        <dt>Work queue</dt>
        <dd>
          ${work
            ? `${text(work['status'])}, attempt ${count(work['attempt']) ?? '?'}${
                textOrNull(work['workerId'])
                  ? `, leased by ${text(work['workerId'])} (epoch ${count(work['leaseEpoch']) ?? '?'}) until ${when(textOrNull(work['leaseExpiresAt']))}`
                  : `, queued since ${when(textOrNull(work['queuedAt']))}`
              }${textOrNull(work['cancelDeadline']) ? `, cancel by ${when(textOrNull(work['cancelDeadline']))}` : ''}`
            : 'not waiting for a worker'}
        </dd>
      </dl>
    </section>`;
  }

  private conversation(task: Json): TemplateResult {
    const history = records(task['history']);
    const artifacts = records(task['artifacts']);
    return html`<section class="panel" aria-labelledby="history">
        <h2 id="history">History (${history.length} messages)</h2>
        ${history.length === 0
          ? html`<p class="muted">No messages.</p>`
          : html`<ol>
              ${history.map(
                (message) =>
                  html`<li>
                    <strong
                      >${text(message['role'])
                        .replace(/^ROLE_/, '')
                        .toLowerCase() || 'message'}</strong
                    >
                    <pre>${partsText(message['parts'])}</pre>
                  </li>`,
              )}
            </ol>`}
      </section>
      <section class="panel" aria-labelledby="artifacts">
        <h2 id="artifacts">Artifacts (${artifacts.length})</h2>
        ${artifacts.length === 0
          ? html`<p class="muted">No artifacts.</p>`
          : html`<ul>
              ${artifacts.map(
                (artifact) =>
                  html`<li>
                    <strong>${text(artifact['name']) || text(artifact['artifactId'])}</strong>
                    <pre>${partsText(artifact['parts'])}</pre>
                  </li>`,
              )}
            </ul>`}
      </section>`;
  }

  private events(timeline: readonly TimelineEntry[]): TemplateResult {
    return html`<section aria-labelledby="timeline">
      <h2 id="timeline">Event timeline (from the log)</h2>
      <div class="scroll">
        <table>
          <caption class="visually-hidden">
            Events of the task
          </caption>
          <thead>
            <tr>
              <th scope="col">Generation</th>
              <th scope="col">Event</th>
              <th scope="col">Recorded</th>
              <th scope="col">Actor</th>
              <th scope="col">Principal</th>
              <th scope="col">Binding</th>
              <th scope="col">Summary</th>
              <th scope="col">Trace</th>
            </tr>
          </thead>
          <tbody>
            ${timeline.map(
              (entry) =>
                html`<tr>
                  <td>${entry.generation ?? '—'}</td>
                  <td>${entry.type}</td>
                  <td>${when(entry.recordedAt)}</td>
                  <td>${entry.actor}</td>
                  <td>${entry.principal}</td>
                  <td>${entry.binding}</td>
                  <td>${entry.summary}</td>
                  <td>${entry.traceId ? html`<code>${entry.traceId}</code>` : '—'}</td>
                </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${this.nextAfter !== null
        ? html`<button type="button" class="secondary" @click=${() => void this.more()}>
            Load more events
          </button>`
        : nothing}
    </section>`;
  }
}

customElements.define('a2a-op-task', TaskPage);
