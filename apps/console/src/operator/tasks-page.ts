import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { readEventStream } from '../shared/sse';
import { adminPath, OperatorPage, problemText, routeHref, when } from './page';
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
 * (`…/tasks/changes`, text/event-stream) is open before the list is read (again after each reconnect), so no
 * change falls in between, and every change updates its row or adds it on top. The stream is filtered by agent
 * and context only, which a task never changes; the state filter is applied here, so that a task leaving the
 * chosen state leaves the list instead of staying in it with its old state.
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
      return known && (known.version ?? 0) > (task.version ?? 0)
        ? { ...known, ownerId: known.ownerId || task.ownerId }
        : task;
    });
  }

  /**
   * Follows the change stream until the page goes away, reconnecting after a drop; the list is read once the
   * stream is open (and read again after a reconnect, for the changes made while it was down).
   */
  private async follow(signal: AbortSignal): Promise<void> {
    const { agentId, contextId } = this.filter;
    while (!signal.aborted) {
      try {
        const response = await fetch(
          adminPath(['tenants', this.tenantId, 'tasks', 'changes'], { agentId, contextId }),
          { headers: this.api.headers({ accept: 'text/event-stream' }), signal },
        );
        void this.load(false);
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
        if (signal.aborted) {
          return;
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
    const known = index < 0 ? undefined : tasks[index]!;
    if (known && (known.version ?? 0) >= (change.version ?? 0)) {
      return;
    }
    const others = index < 0 ? tasks : [...tasks.slice(0, index), ...tasks.slice(index + 1)];
    if (this.filter.state !== '' && change.state !== this.filter.state) {
      this.tasks = others;
      return;
    }
    // A change carries no owner: keep the one the list read, or read the row of a task the list had not.
    this.tasks = [{ ...change, ownerId: known?.ownerId ?? '' }, ...others];
    if (!known) {
      void this.readOwner(change.taskId);
    }
  }

  /** Fills in the owner of a task that arrived through the change stream, from its row. */
  private async readOwner(taskId: string): Promise<void> {
    let ownerId: string;
    try {
      const row = await this.api.get<unknown>(
        adminPath(['tenants', this.tenantId, 'tasks', taskId]),
      );
      ownerId = text(record(row)['ownerId']);
    } catch (error) {
      this.error = problemText(error);
      return;
    }
    this.tasks = (this.tasks ?? []).map((task) =>
      task.taskId === taskId && task.ownerId === '' ? { ...task, ownerId } : task,
    );
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
