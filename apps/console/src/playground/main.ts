import '@a2ui/lit/v0_9';
import type { A2uiClientAction } from '@a2ui/web_core/v0_9';
import { css, html, LitElement, nothing, type TemplateResult } from 'lit';
import { CredentialSession, fieldText } from '../shared/session';
import { theme } from '../shared/theme';
import { A2aClient, type AgentEndpoint, type Frame } from './a2a-client';
import { isTerminal, stateLabel, type AgentCard, type Part, type Task } from './a2a-model';
import { A2UI_EXTENSION_URI, A2uiHost, a2uiMediaType, type SurfaceOrigin } from './a2ui-host';
import { checkCard, jsonRpcInterface, type CardCheck } from './card-check';
import { verifyCardSignature } from './card-signature';
import {
  agentParts,
  alreadySeen,
  continuedTask,
  newConversation,
  record,
  taskIsLive,
  timeline,
  type Conversation,
  type Entry,
  type LogItem,
} from './conversation';
import { partView } from './parts-view';

/** An agent of the key's tenant, as `GET /a2a/agents` lists it (apps/ingress agent-directory.controller.ts). */
interface DirectoryEntry {
  tenant: string;
  agent: string;
  name: string;
  description: string;
  cardUrl: string;
}

/** The platform's extension for gap-free resumption (docs/extensions/resumable-streams.md). */
const RESUMABLE_STREAMS_URI = 'https://a2a-platform.dev/extensions/resumable-streams/v1';
/** Extensions the playground activates when the agent's card declares them. */
const SPOKEN_EXTENSIONS = [RESUMABLE_STREAMS_URI, A2UI_EXTENSION_URI];
const CONVERSATION_KEY = 'a2a-console.playground.conversation';
const MAX_FRAMES = 500;
/** Times a live task's stream is reopened after it ended early (cut off, platform unavailable). */
const RESUME_ATTEMPTS = 3;
/** The wait before the first such reopening; each next one waits longer. */
const RESUME_DELAY_MS = 500;

/**
 * The agent user's face of the console, like the A2A inspector: signed in with a tenant API key, pick an
 * agent of the tenant, see its card and whether it validates, chat over SendStreamingMessage (multi-turn on
 * the task while it waits for input, cancel), render the agent's A2UI surfaces, and watch every raw frame.
 * The conversation (open task, last event id) lives in sessionStorage: a reload resubscribes with
 * `Last-Event-ID` and shows every event once.
 */
export class PlaygroundApp extends LitElement {
  static override styles = [
    theme,
    css`
      main {
        padding: 1rem 1.5rem;
        max-width: 1400px;
      }
      header {
        display: flex;
        justify-content: space-between;
        align-items: center;
        gap: 1rem;
      }
      .columns {
        display: grid;
        grid-template-columns: minmax(260px, 1fr) minmax(320px, 2fr);
        gap: 1rem;
        align-items: start;
      }
      .checks li,
      .frames li,
      .timeline > li {
        list-style: none;
      }
      .checks,
      .frames,
      .timeline {
        padding: 0;
        margin: 0;
      }
      .timeline > li {
        border-left: 4px solid var(--line);
        padding: 0.3rem 0.7rem;
        margin: 0 0 0.5rem;
        background: #fff;
      }
      .timeline > li.user {
        border-left-color: var(--accent);
      }
      .timeline > li.agent,
      .timeline > li.artifact {
        border-left-color: var(--ok);
      }
      .timeline > li.notice {
        border-left-color: var(--danger);
      }
      .who {
        font-weight: 600;
        margin-right: 0.4rem;
      }
      .part {
        margin: 0.2rem 0;
      }
      .artifact-parts {
        display: flex;
        flex-wrap: wrap;
        gap: 0.3rem 0.8rem;
      }
      textarea {
        width: 100%;
        min-height: 4rem;
      }
      .surface {
        /* The basic catalog's theme, in the console's colours (its default primary fails AA contrast). */
        --a2ui-color-primary: var(--accent);
        --a2ui-color-on-primary: var(--accent-ink);
        --a2ui-color-on-surface: var(--ink);
        --a2ui-color-on-background: var(--ink);
        --a2ui-color-background: #fff;
        color-scheme: light;
        background: #fff;
        border: 1px solid var(--line);
        border-radius: 6px;
        padding: 0.6rem;
        margin: 0 0 0.6rem;
      }
      .frame pre {
        max-height: 14rem;
      }
      summary h2 {
        display: inline;
      }
      .checks {
        overflow-wrap: anywhere;
      }
      .frame h3 {
        font-size: 0.9rem;
        margin: 0.6rem 0 0.2rem;
      }
    `,
  ];

  static override properties = {
    signedIn: { state: true },
    agents: { state: true },
    error: { state: true },
    card: { state: true },
    checks: { state: true },
    conversation: { state: true },
    streaming: { state: true },
    frames: { state: true },
  };

  declare signedIn: boolean;
  declare agents: DirectoryEntry[] | null;
  declare error: string | null;
  declare card: AgentCard | null;
  declare checks: CardCheck[];
  declare conversation: Conversation | null;
  /** The stream open: a turn (SendStreamingMessage) or a subscription to the task (SubscribeToTask). */
  declare streaming: 'turn' | 'subscription' | null;
  declare frames: Frame[];

  private readonly session = new CredentialSession('a2a-console.api-key');
  private readonly client = new A2aClient(
    () => this.session.token,
    (frame) => {
      this.frames = [...this.frames.slice(-(MAX_FRAMES - 1)), frame];
    },
  );
  private endpoint: AgentEndpoint | null = null;
  private host: A2uiHost | null = null;
  private seenTasks = new Set<string>();
  private stream: AbortController | null = null;
  /** Set on pagehide: the page is going away, and what it knows must stay as it was stored. */
  private leaving = false;

  constructor() {
    super();
    this.signedIn = this.session.token !== null;
    this.agents = null;
    this.error = null;
    this.card = null;
    this.checks = [];
    this.conversation = null;
    this.streaming = null;
    this.frames = [];
  }

  override connectedCallback(): void {
    super.connectedCallback();
    addEventListener('pagehide', () => {
      this.leaving = true;
    });
    if (this.signedIn) {
      void this.loadAgents();
    }
  }

  private async loadAgents(): Promise<void> {
    try {
      const response = await fetch('/a2a/agents', {
        headers: { accept: 'application/json', 'x-api-key': this.session.token ?? '' },
      });
      const body = (await response.json()) as {
        agents?: DirectoryEntry[];
        error?: { message?: string };
      };
      if (!response.ok || !body.agents) {
        throw new Error(
          `${response.status}: ${body.error?.message ?? 'the agents could not be listed'}`,
        );
      }
      this.agents = body.agents;
      this.error = null;
      const stored = storedConversation();
      if (stored && body.agents.some((a) => keyOf(a) === stored.agent)) {
        await this.selectAgent(stored.agent, stored);
      }
    } catch (error) {
      this.session.signOut();
      this.signedIn = false;
      this.error = messageOf(error);
    }
  }

  private signIn(event: SubmitEvent): void {
    event.preventDefault();
    this.session.signIn(fieldText(event.target as HTMLFormElement, 'apiKey'));
    this.signedIn = true;
    void this.loadAgents();
  }

  private signOut(): void {
    this.stream?.abort();
    this.session.signOut();
    sessionStorage.removeItem(CONVERSATION_KEY);
    this.signedIn = false;
    this.agents = null;
    this.card = null;
    this.conversation = null;
    this.frames = [];
  }

  /** Shows the agent's card and opens a conversation with it: `restored` one from before a reload, or a new one. */
  private async selectAgent(key: string, restored?: Conversation): Promise<void> {
    this.stream?.abort();
    const entry = this.agents?.find((a) => keyOf(a) === key);
    this.card = null;
    this.checks = [];
    this.endpoint = null;
    this.conversation = null;
    if (!entry) {
      sessionStorage.removeItem(CONVERSATION_KEY);
      return;
    }
    try {
      const response = await fetch(entry.cardUrl, { headers: { accept: 'application/json' } });
      const text = await response.text();
      this.frames = [
        ...this.frames,
        {
          direction: 'received',
          at: new Date().toISOString(),
          label: `${response.status} GET ${entry.cardUrl}`,
          body: response.ok ? JSON.stringify(JSON.parse(text), null, 2) : text,
        },
      ];
      if (!response.ok) {
        throw new Error(`${response.status}: the agent card could not be fetched`);
      }
      const card = JSON.parse(text) as AgentCard;
      this.card = card;
      this.checks = checkCard(card);
      void verifyCardSignature(card).then((check) => {
        if (this.card === card) {
          this.checks = [...this.checks, check];
        }
      });
      this.endpoint = endpointOf(card, entry);
      this.error = null;
    } catch (error) {
      this.error = messageOf(error);
      return;
    }
    this.openConversation(restored ?? newConversation(key));
    const conversation = this.conversation as Conversation | null;
    if (conversation?.streaming) {
      void this.resume(conversation);
    }
  }

  /**
   * Picks up the stream the page was following before it was reloaded: after the last event it received
   * (`Last-Event-ID`). When the page went away before the first event of a new task, the task is found by
   * the conversation's context and all its events are read from the start.
   */
  private async resume(conversation: Conversation): Promise<void> {
    const last = conversation.log.at(-1);
    const unanswered = last?.kind === 'sent' ? last.message : undefined;
    if (unanswered && unanswered.taskId === undefined && this.endpoint && conversation.contextId) {
      try {
        const { tasks } = await this.client.call<{
          tasks: { id: string; status: { state: string } }[];
        }>(this.endpoint, 'ListTasks', {
          contextId: conversation.contextId,
          pageSize: 1,
          historyLength: 0,
        });
        const task = tasks[0];
        if (
          !task ||
          task.id === conversation.task?.id ||
          !this.endpoint.extensions.includes(RESUMABLE_STREAMS_URI)
        ) {
          this.remember({
            kind: 'notice',
            text: 'The last message got no answer before the page was reloaded.',
          });
          conversation.streaming = false;
          this.persist();
          return;
        }
        conversation.task = { id: task.id, state: task.status.state };
        conversation.lastEventId = '0';
      } catch (error) {
        this.remember({ kind: 'notice', text: messageOf(error) });
        return;
      }
    } else if (!unanswered && !taskIsLive(conversation)) {
      conversation.streaming = false;
      this.persist();
      return;
    }
    await this.follow('SubscribeToTask');
  }

  /** Makes `conversation` the current one: its agent UI is rebuilt from its log. */
  private openConversation(conversation: Conversation): void {
    this.host = new A2uiHost(
      (action, origin) => void this.sendAction(action, origin),
      () => this.requestUpdate(),
    );
    this.seenTasks = new Set();
    for (const item of conversation.log) {
      this.renderAgentUi(item);
    }
    this.conversation = conversation;
    this.persist();
  }

  private startOver(): void {
    this.stream?.abort();
    if (this.conversation) {
      this.openConversation(newConversation(this.conversation.agent));
    }
  }

  private renderAgentUi(item: LogItem): void {
    for (const part of agentParts(item, this.seenTasks)) {
      const mediaType = a2uiMediaType(part);
      if (mediaType !== null) {
        this.host?.ingest(part, mediaType);
      }
    }
  }

  private remember(item: LogItem): void {
    const conversation = this.conversation;
    if (!conversation) {
      return;
    }
    record(conversation, item);
    this.renderAgentUi(item);
    this.persist();
    this.requestUpdate();
  }

  private persist(): void {
    if (!this.conversation || this.leaving) {
      return;
    }
    try {
      sessionStorage.setItem(CONVERSATION_KEY, JSON.stringify(this.conversation));
    } catch {
      // Over the storage quota: the conversation goes on, but a reload starts afresh.
      sessionStorage.removeItem(CONVERSATION_KEY);
      this.error = 'This conversation is too large to be kept across a reload of the page.';
    }
  }

  private sendText(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const text = fieldText(form, 'message');
    if (text === '') {
      return;
    }
    form.reset();
    void this.send([{ text }]);
  }

  /** A user's A2UI action goes back to the agent as a new message on the same task (a2ui extension spec). */
  private async sendAction(action: A2uiClientAction, origin: SurfaceOrigin): Promise<void> {
    await this.send(
      [{ data: [{ version: origin.version, action }], mediaType: origin.mediaType }],
      [A2UI_EXTENSION_URI],
    );
  }

  /**
   * SendStreamingMessage with the parts, continuing the conversation's task while it has not ended;
   * `extensions`: the URIs of the extensions whose data the message carries (spec digest §10.2).
   */
  private async send(parts: Part[], extensions: string[] = []): Promise<void> {
    const conversation = this.conversation;
    if (!conversation || this.streaming === 'turn') {
      return;
    }
    // A subscription that waits for the task gives way to the user's new turn.
    this.stream?.abort();
    // A context of the conversation's own: a reload before the first event finds the new task by it.
    conversation.contextId ??= crypto.randomUUID();
    const taskId = continuedTask(conversation);
    if (taskId === undefined) {
      // A new task's events are numbered afresh.
      delete conversation.lastEventId;
    }
    const dataModel = this.host?.dataModel();
    const message = {
      messageId: crypto.randomUUID(),
      role: 'ROLE_USER' as const,
      parts,
      contextId: conversation.contextId,
      ...(taskId ? { taskId } : {}),
      ...(extensions.length > 0 ? { extensions } : {}),
      metadata: {
        ...(this.host ? { a2uiClientCapabilities: this.host.capabilities() } : {}),
        ...(dataModel ? { a2uiClientDataModel: dataModel } : {}),
      },
    };
    this.remember({ kind: 'sent', message });
    await this.follow('SendStreamingMessage', { message });
  }

  /**
   * Follows a stream of the conversation's task: SendStreamingMessage with `params`, or SubscribeToTask after
   * the last event seen (`Last-Event-ID`). A stream that ends while the task still works is reopened so.
   */
  private async follow(
    method: 'SendStreamingMessage' | 'SubscribeToTask',
    params?: object,
  ): Promise<void> {
    const endpoint = this.endpoint;
    const conversation = this.conversation;
    if (!endpoint || !conversation) {
      return;
    }
    const controller = new AbortController();
    this.stream = controller;
    this.streaming = method === 'SendStreamingMessage' ? 'turn' : 'subscription';
    let attempts = 0;
    let next: { method: typeof method; params?: object } | null = { method, params };
    try {
      while (next && !controller.signal.aborted) {
        conversation.streaming = true;
        this.persist();
        const resume = next.method === 'SubscribeToTask';
        const taskId = conversation.task?.id;
        if (resume && taskId === undefined) {
          break;
        }
        const events = this.client.stream(
          endpoint,
          next.method,
          resume ? { id: taskId } : (next.params ?? {}),
          controller.signal,
          resume && endpoint.extensions.includes(RESUMABLE_STREAMS_URI)
            ? conversation.lastEventId
            : undefined,
        );
        for await (const event of events) {
          if (!alreadySeen(conversation, event)) {
            this.remember({ kind: 'event', event });
          }
          // A subscription stays open while the task waits for input; the user answers on a new stream.
          if (resume && !taskIsLive(conversation)) {
            break;
          }
        }
        next =
          taskIsLive(conversation) && ++attempts <= RESUME_ATTEMPTS
            ? { method: 'SubscribeToTask' }
            : null;
        if (next) {
          await new Promise((resolve) => setTimeout(resolve, RESUME_DELAY_MS * attempts));
        }
      }
    } catch (error) {
      if (!controller.signal.aborted && !this.leaving) {
        this.remember({ kind: 'notice', text: messageOf(error) });
      }
    } finally {
      controller.abort();
      if (this.stream === controller) {
        this.stream = null;
        this.streaming = null;
        if (!this.leaving) {
          conversation.streaming = false;
          this.persist();
        }
      }
    }
  }

  private async cancel(): Promise<void> {
    const endpoint = this.endpoint;
    const task = this.conversation?.task;
    if (!endpoint || !task) {
      return;
    }
    try {
      const canceled = await this.client.call<Task>(endpoint, 'CancelTask', { id: task.id });
      // An open stream reports the cancellation itself; without one, the answer is the news.
      if (!this.streaming) {
        this.remember({ kind: 'event', event: { id: null, response: { task: canceled } } });
      }
    } catch (error) {
      this.remember({ kind: 'notice', text: messageOf(error) });
    }
  }

  override render(): TemplateResult {
    if (!this.signedIn) {
      return html`<main>
        <h1>Sign in to talk to your agents</h1>
        <form @submit=${(event: SubmitEvent) => this.signIn(event)}>
          <label for="apiKey">Tenant API key</label>
          <input id="apiKey" name="apiKey" type="password" autocomplete="off" required size="48" />
          <button type="submit">Sign in</button>
        </form>
        ${this.error ? html`<p role="alert" class="error">${this.error}</p>` : null}
      </main>`;
    }
    return html`<main>
      <header>
        <h1>Agent playground</h1>
        <button class="secondary" type="button" @click=${() => this.signOut()}>Sign out</button>
      </header>
      ${this.error ? html`<p role="alert" class="error">${this.error}</p>` : null}
      <div class="columns">
        <div>${this.renderPicker()} ${this.renderCard()}</div>
        <div>${this.renderChat()}</div>
      </div>
      ${this.renderFrames()}
    </main>`;
  }

  private renderPicker(): TemplateResult {
    const selected = this.conversation?.agent ?? '';
    return html`<section class="panel" aria-labelledby="agents-heading">
      <h2 id="agents-heading">Agent</h2>
      <label for="agent">Agent of your tenant</label>
      <select
        id="agent"
        @change=${(event: Event) =>
          void this.selectAgent((event.target as HTMLSelectElement).value)}
      >
        <option value="" ?selected=${selected === ''}>Choose an agent</option>
        ${(this.agents ?? []).map(
          (agent) =>
            html`<option value=${keyOf(agent)} ?selected=${keyOf(agent) === selected}>
              ${agent.name} (${keyOf(agent)})
            </option>`,
        )}
      </select>
      ${this.agents?.length === 0
        ? html`<p class="muted">Your tenant hosts no agent.</p>`
        : nothing}
    </section>`;
  }

  private renderCard(): TemplateResult | typeof nothing {
    const card = this.card;
    if (!card) {
      return nothing;
    }
    const extensions = card.capabilities?.extensions ?? [];
    return html`<section class="panel" aria-labelledby="card-heading">
      <h2 id="card-heading">Agent card: ${card.name}</h2>
      <p>${card.description}</p>
      <p class="muted">Version ${card.version}</p>
      <h3>Validation</h3>
      <ul class="checks">
        ${this.checks.map(
          (check) =>
            html`<li class=${check.ok ? 'ok' : 'error'}>
              ${check.ok ? '✓' : '✗'} ${check.name}: ${check.detail}
            </li>`,
        )}
      </ul>
      <h3>Skills</h3>
      <ul>
        ${(card.skills ?? []).map(
          (skill) => html`<li><strong>${skill.name}</strong>: ${skill.description}</li>`,
        )}
      </ul>
      ${extensions.length > 0
        ? html`<h3>Extensions</h3>
            <ul>
              ${extensions.map(
                (e) =>
                  html`<li>
                    <code>${e.uri}</code>${e.required
                      ? ' (required)'
                      : ''}${this.endpoint?.extensions.includes(e.uri ?? '') ? ' — activated' : ''}
                  </li>`,
              )}
            </ul>`
        : nothing}
      <details>
        <summary>Card JSON</summary>
        <pre tabindex="0">${JSON.stringify(card, null, 2)}</pre>
      </details>
    </section>`;
  }

  private renderChat(): TemplateResult | typeof nothing {
    const conversation = this.conversation;
    if (!conversation || !this.endpoint) {
      return nothing;
    }
    const task = conversation.task;
    const open = task !== undefined && !isTerminal(task.state);
    const surfaces = this.host?.rendered ?? [];
    const notices = this.host?.notices ?? [];
    return html`<section class="panel" aria-labelledby="chat-heading">
      <h2 id="chat-heading">Conversation</h2>
      <p class="muted" id="task-state">
        ${task ? html`Task <code>${task.id}</code>: ${stateLabel(task.state)}` : 'No task yet'}
        ${this.streaming ? ' (streaming)' : ''}
      </p>
      <div role="log" aria-label="Messages and events">
        <ol class="timeline">
          ${timeline(conversation.log).map((entry) => entryView(entry))}
        </ol>
      </div>
      ${surfaces.length > 0 || notices.length > 0
        ? html`<section aria-label="Agent UI">
            <h3>Agent UI</h3>
            ${notices.map((notice) => html`<p class="error">${notice}</p>`)}
            ${surfaces.map(
              (surface) =>
                html`<div class="surface" data-surface=${surface.id}>
                  <a2ui-surface .surface=${surface}></a2ui-surface>
                </div>`,
            )}
          </section>`
        : nothing}
      <form @submit=${(event: SubmitEvent) => this.sendText(event)}>
        <label for="message">Message</label>
        <textarea id="message" name="message" required></textarea>
        <div class="row">
          <button type="submit" ?disabled=${this.streaming === 'turn'}>
            ${task && open ? 'Send on this task' : 'Send'}
          </button>
          ${open
            ? html`<button class="danger" type="button" @click=${() => void this.cancel()}>
                Cancel task
              </button>`
            : nothing}
          <button class="secondary" type="button" @click=${() => this.startOver()}>
            New conversation
          </button>
        </div>
      </form>
    </section>`;
  }

  private renderFrames(): TemplateResult {
    return html`<section class="panel" aria-labelledby="frames-heading">
      <details>
        <summary><h2 id="frames-heading">Raw frames (${this.frames.length})</h2></summary>
        <ol class="frames">
          ${this.frames.map(
            (frame) =>
              html`<li class="frame">
                <h3>${frame.direction === 'sent' ? '→ Sent' : '← Received'} ${frame.label}</h3>
                <p class="muted">${frame.at}</p>
                <pre tabindex="0">${frame.body}</pre>
              </li>`,
          )}
        </ol>
      </details>
    </section>`;
  }
}

function entryView(entry: Entry): TemplateResult {
  switch (entry.kind) {
    case 'user':
      return html`<li class="user"><span class="who">You</span>${entry.parts.map(partView)}</li>`;
    case 'agent':
      return html`<li class="agent">
        <span class="who">Agent</span>${entry.parts.map(partView)}
      </li>`;
    case 'status':
      return html`<li class="status" data-state=${entry.state}>
        <span class="who">Status</span>${stateLabel(entry.state)} ${entry.parts.map(partView)}
      </li>`;
    case 'artifact':
      return html`<li class="artifact" data-artifact=${entry.artifactId}>
        <span class="who">Artifact ${entry.name}</span>
        <div class="artifact-parts">${entry.parts.map(partView)}</div>
      </li>`;
    case 'notice':
      return html`<li class="notice">
        <span class="who">Notice</span><span class="error">${entry.text}</span>
      </li>`;
  }
}

/** The JSON-RPC endpoint of the card, on this origin (the console may call its own origin only). */
function endpointOf(card: AgentCard, entry: DirectoryEntry): AgentEndpoint {
  const declared = jsonRpcInterface(card);
  const url = declared ? new URL(declared.url, location.href) : null;
  const sameOrigin = url !== null && url.origin === location.origin;
  const uris = (card.capabilities?.extensions ?? []).map((e) => e.uri ?? '');
  return {
    url: sameOrigin
      ? url.href
      : `/agents/${encodeURIComponent(entry.tenant)}/${encodeURIComponent(entry.agent)}/jsonrpc`,
    ...(declared?.tenant ? { tenant: declared.tenant } : {}),
    extensions: SPOKEN_EXTENSIONS.filter((uri) => uris.includes(uri)),
  };
}

function keyOf(entry: DirectoryEntry): string {
  return `${entry.tenant}/${entry.agent}`;
}

function storedConversation(): Conversation | null {
  const text = sessionStorage.getItem(CONVERSATION_KEY);
  if (text === null) {
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Conversation;
    return typeof parsed.agent === 'string' && Array.isArray(parsed.log) ? parsed : null;
  } catch {
    return null;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

customElements.define('a2a-playground-app', PlaygroundApp);
