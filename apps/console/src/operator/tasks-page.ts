import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { readEventStream } from '../shared/sse';
import { adminPath, OperatorPage, routeHref, when } from './page';
import { count, record, records, stateText, text, textOrNull, type Json } from './parse';
import { TASK_STATES, type TaskSummary } from './types';

/** How long a dropped change stream waits before it reconnects. */
const RECONNECT_MS = 2_000;

function taskSummary(value: Json): TaskSummary {
  return {
    taskId: text(value['taskId']),
    contextId: text(value['contextId']),
    agentId: text(value['agentId']),
    ownerId: text(value['ownerId']),
    state: text(value['state']),
    statusTimestamp: textOrNull(value['statusTimestamp']),
    version: count(value['version']),
  };
}

interface TaskFilter {
  agentId: string;
  state: string;
  contextId: string;
}

/**
 * A tenant's tasks (every principal's), newest status first, kept live: the change stream
 * (`…/tasks/changes`, text/event-stream) is opened before the list is read, so no change falls in between,
 * and every change updates its row or adds it on top.
 */
export class TasksPage extends OperatorPage {
  static override properties = {
    tasks: { state: true },
    nextCursor: { state: true },
    filter: { state: true },
    live: { state: true },
  };

  declare tasks: TaskSummary[] | null;
  declare nextCursor: string | undefined;
  declare filter: TaskFilter;
  declare live: string;
  private stream: AbortController | null = null;

  constructor() {
    super();
    this.tasks = null;
    this.nextCursor = undefined;
    this.filter = { agentId: '', state: '', contextId: '' };
    this.live = '';
  }

  override connectedCallback(): void {
    super.connectedCallback();
    this.restart();
  }

  override disconnectedCallback(): void {
    this.stream?.abort();
    this.stream = null;
    super.disconnectedCallback();
  }

  private restart(): void {
    this.stream?.abort();
    const controller = new AbortController();
    this.stream = controller;
    void this.follow(controller.signal);
    void this.load(false);
  }

  private async load(more: boolean): Promise<void> {
    const query = {
      ...this.filter,
      ...(more && this.nextCursor ? { cursor: this.nextCursor } : {}),
    };
    const page = await this.attempt('Loading tasks', () =>
      this.api.get<unknown>(adminPath(['tenants', this.tenantId, 'tasks'], query)),
    );
    if (page !== undefined) {
      const loaded = records(record(page)['tasks']).map(taskSummary);
      this.tasks = more ? [...(this.tasks ?? []), ...loaded] : this.merged(loaded);
      this.nextCursor = textOrNull(record(page)['nextCursor']) ?? undefined;
    }
  }

  /** A fresh first page, with the changes that arrived while it was read kept where newer. */
  private merged(loaded: TaskSummary[]): TaskSummary[] {
    const seen = new Map((this.tasks ?? []).map((task) => [task.taskId, task]));
    return loaded.map((task) => {
      const known = seen.get(task.taskId);
      return known && (known.version ?? 0) > (task.version ?? 0) ? known : task;
    });
  }

  /** Follows the change stream until the page goes away, reconnecting after a drop. */
  private async follow(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        const response = await fetch(
          adminPath(['tenants', this.tenantId, 'tasks', 'changes'], { ...this.filter }),
          { headers: this.api.headers({ accept: 'text/event-stream' }), signal },
        );
        if (!response.ok || !response.body) {
          this.live = `Live updates unavailable (${response.status}).`;
          return;
        }
        this.live = 'Live: following changes.';
        for await (const event of readEventStream(response.body, signal)) {
          if (event.event === 'task') {
            this.apply(taskSummary(record(JSON.parse(event.data))));
          }
        }
      } catch {
        if (signal.aborted) {
          return;
        }
      }
      this.live = 'Live updates interrupted: reconnecting.';
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_MS));
    }
  }

  private apply(change: TaskSummary): void {
    const tasks = this.tasks ?? [];
    const index = tasks.findIndex((task) => task.taskId === change.taskId);
    if (index < 0) {
      this.tasks = [change, ...tasks];
      return;
    }
    const known = tasks[index]!;
    if ((known.version ?? 0) >= (change.version ?? 0)) {
      return;
    }
    // A change carries no owner: keep the one the list read.
    const updated = { ...change, ownerId: change.ownerId || known.ownerId };
    this.tasks = [updated, ...tasks.slice(0, index), ...tasks.slice(index + 1)];
  }

  private applyFilter(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    this.filter = {
      agentId: fieldText(form, 'agentId'),
      state: fieldText(form, 'state'),
      contextId: fieldText(form, 'contextId'),
    };
    this.tasks = null;
    this.restart();
  }

  override render(): TemplateResult {
    return html`<div class="toolbar">
        <h1>Tasks of ${this.tenantId}</h1>
        <span class="muted" role="status">${this.live}</span>
      </div>
      <form class="panel" @submit=${(event: SubmitEvent) => this.applyFilter(event)}>
        <div class="row">
          <div>
            <label for="agentId">Agent</label>
            <input id="agentId" name="agentId" .value=${this.filter.agentId} />
          </div>
          <div>
            <label for="state">State</label>
            <select id="state" name="state">
              <option value="">any</option>
              ${TASK_STATES.map(
                (state) =>
                  html`<option value=${state} ?selected=${this.filter.state === state}>
                    ${stateText(state)}
                  </option>`,
              )}
            </select>
          </div>
          <div>
            <label for="contextId">Context id</label>
            <input id="contextId" name="contextId" size="38" .value=${this.filter.contextId} />
          </div>
          <button type="submit">Filter</button>
        </div>
      </form>
      ${this.feedback()} ${this.tasks ? this.table(this.tasks) : nothing}
      ${this.nextCursor
        ? html`<button type="button" class="secondary" @click=${() => void this.load(true)}>
            Load more
          </button>`
        : nothing}`;
  }

  private table(tasks: readonly TaskSummary[]): TemplateResult {
    if (tasks.length === 0) {
      return html`<p>No tasks match.</p>`;
    }
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          Tasks
        </caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">Agent</th>
            <th scope="col">State</th>
            <th scope="col">Status time</th>
            <th scope="col">Version</th>
            <th scope="col">Owner</th>
            <th scope="col">Context</th>
          </tr>
        </thead>
        <tbody>
          ${tasks.map(
            (task) =>
              html`<tr>
                <td>
                  <a href=${routeHref(['tenants', this.tenantId, 'tasks', task.taskId])}
                    ><code>${task.taskId}</code></a
                  >
                </td>
                <td>${task.agentId}</td>
                <td>${stateText(task.state)}</td>
                <td>${when(task.statusTimestamp)}</td>
                <td>${task.version ?? '—'}</td>
                <td>${task.ownerId || '—'}</td>
                <td><code>${task.contextId}</code></td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('a2a-op-tasks', TasksPage);
