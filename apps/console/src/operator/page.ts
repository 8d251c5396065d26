import {
  css,
  html,
  LitElement,
  nothing,
  type PropertyDeclarations,
  type TemplateResult,
} from 'lit';
import { ApiError, type JsonClient } from '../shared/api';
import { theme } from '../shared/theme';

/** `/admin/v1/<segments>`, each segment encoded, with the query's non-empty values. */
export function adminPath(segments: readonly string[], query: Record<string, string> = {}): string {
  const path = `/admin/v1/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
  const params = new URLSearchParams(Object.entries(query).filter(([, value]) => value !== ''));
  const search = params.toString();
  return search === '' ? path : `${path}?${search}`;
}

/** The console's own link to a route (hash routing, so a reload keeps the page). */
export function routeHref(segments: readonly string[]): string {
  return `#/${segments.map((segment) => encodeURIComponent(segment)).join('/')}`;
}

/** A time as UTC `YYYY-MM-DD HH:MM:SS`, or a dash. */
export function when(iso: string | null | undefined): string {
  if (!iso) {
    return '—';
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime())
    ? iso
    : `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** What went wrong, as the admin API said it, with the fields it named. */
export function problemText(error: unknown): string {
  if (error instanceof ApiError) {
    const fields = fieldProblems(error.body);
    return fields.length > 0 ? `${error.message} (${fields.join('; ')})` : error.message;
  }
  return error instanceof Error ? error.message : String(error);
}

function fieldProblems(body: unknown): string[] {
  if (!body || typeof body !== 'object') {
    return [];
  }
  const error = (body as { error?: unknown }).error;
  const fields = error && typeof error === 'object' ? (error as { fields?: unknown }).fields : null;
  if (!Array.isArray(fields)) {
    return [];
  }
  return fields.map((field: unknown) => {
    const { field: name, description } = (field ?? {}) as {
      field?: unknown;
      description?: unknown;
    };
    return `${String(name)}: ${String(description)}`;
  });
}

/** Layout and widgets of the operator's pages, on top of the shared theme. */
export const operatorStyles = css`
  .toolbar {
    display: flex;
    gap: 0.5rem;
    align-items: center;
    flex-wrap: wrap;
    margin: 0 0 0.8rem;
  }
  .toolbar h1 {
    margin: 0 auto 0 0;
  }
  form.panel .row > div {
    display: flex;
    flex-direction: column;
  }
  fieldset {
    border: 1px solid var(--line);
    border-radius: 4px;
    margin: 0.5rem 0;
    padding: 0.3rem 0.8rem 0.6rem;
  }
  fieldset label {
    display: inline-flex;
    gap: 0.3rem;
    font-weight: 400;
    margin: 0.2rem 1rem 0.2rem 0;
  }
  legend {
    font-weight: 600;
  }
  textarea {
    width: 100%;
    min-height: 8rem;
  }
  textarea.short {
    min-height: 3rem;
  }
  td.actions {
    white-space: nowrap;
  }
  td.actions button {
    margin-right: 0.3rem;
  }
  .tag {
    display: inline-block;
    border: 1px solid var(--line);
    border-radius: 999px;
    padding: 0 0.5rem;
    margin: 0 0.2rem 0.2rem 0;
    background: #fff;
    font-size: 0.85em;
  }
  .state-dead,
  .state-suspended,
  .state-deleting,
  .state-revoked {
    color: var(--danger);
    font-weight: 600;
  }
  .state-delivered,
  .state-active {
    color: var(--ok);
    font-weight: 600;
  }
  dl.facts {
    display: grid;
    grid-template-columns: max-content 1fr;
    gap: 0.2rem 1rem;
    margin: 0;
  }
  dl.facts dt {
    font-weight: 600;
  }
  dl.facts dd {
    margin: 0;
  }
  .secret {
    border-color: var(--accent);
    background: #eef5fc;
  }
  .secret-value {
    width: 100%;
    font-family: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace;
    margin-bottom: 0.5rem;
  }
  a {
    color: var(--accent);
  }
  .panel h3 {
    margin-top: 0.8rem;
  }
  .scroll {
    overflow-x: auto;
  }
`;

/**
 * One page of the operator's console: it calls the admin API with the signed-in credential (`api`), shows the
 * API's error message in an alert and a status line while it works.
 */
export abstract class OperatorPage extends LitElement {
  static override styles = [theme, operatorStyles];
  static override properties: PropertyDeclarations = {
    api: { attribute: false },
    tenantId: { attribute: false },
    platformAdmin: { attribute: false },
    error: { state: true },
    busy: { state: true },
  };

  declare api: JsonClient;
  declare tenantId: string;
  declare platformAdmin: boolean;
  declare error: string | null;
  declare busy: string | null;

  constructor() {
    super();
    this.tenantId = '';
    this.platformAdmin = false;
    this.error = null;
    this.busy = null;
  }

  /** Runs `work` with `activity` as the status line; a failure becomes the page's alert. */
  protected async attempt<T>(activity: string, work: () => Promise<T>): Promise<T | undefined> {
    this.busy = activity;
    this.error = null;
    try {
      return await work();
    } catch (error) {
      this.error = problemText(error);
      return undefined;
    } finally {
      this.busy = null;
    }
  }

  /** The alert and the status line, for the top of the page. */
  protected feedback(): TemplateResult {
    return html`${this.error ? html`<p role="alert" class="error">${this.error}</p>` : nothing}
      <p role="status" class="muted">${this.busy ? `${this.busy}…` : ''}</p>`;
  }
}
