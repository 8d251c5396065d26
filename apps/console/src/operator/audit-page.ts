import { html, nothing, type TemplateResult } from 'lit';
import { fieldText } from '../shared/session';
import { adminPath, OperatorPage, when } from './page';
import { AUDIT_OUTCOMES, type AuditPage, type AuditRecord, type AuditVerification } from './types';

const FILTERS = ['principal', 'operation', 'resource', 'outcome'] as const;

/** Records per page ("load more" fetches the next). */
const AUDIT_PAGE_SIZE = 50;

/** A tenant's audit trail, newest first: filters, "load more" cursor paging, and the verification of its chain. */
export class AuditLogPage extends OperatorPage {
  static override properties = {
    records: { state: true },
    nextCursor: { state: true },
    verification: { state: true },
  };

  declare records: AuditRecord[] | null;
  declare nextCursor: string | undefined;
  declare verification: AuditVerification | null;
  private filter: Record<string, string> = {};

  constructor() {
    super();
    this.records = null;
    this.nextCursor = undefined;
    this.verification = null;
  }

  override connectedCallback(): void {
    super.connectedCallback();
    void this.load(false);
  }

  private async load(more: boolean): Promise<void> {
    const query = {
      ...this.filter,
      limit: String(AUDIT_PAGE_SIZE),
      ...(more && this.nextCursor ? { cursor: this.nextCursor } : {}),
    };
    const page = await this.attempt('Loading audit records', () =>
      this.api.get<AuditPage>(adminPath(['tenants', this.tenantId, 'audit'], query)),
    );
    if (page) {
      this.records = more ? [...(this.records ?? []), ...page.records] : page.records;
      this.nextCursor = page.nextCursor;
    }
  }

  private applyFilter(event: SubmitEvent): void {
    event.preventDefault();
    const form = event.target as HTMLFormElement;
    const time = (name: string): string => {
      const text = fieldText(form, name);
      return text === '' ? '' : new Date(text).toISOString();
    };
    this.filter = {
      ...Object.fromEntries(FILTERS.map((name) => [name, fieldText(form, name)])),
      from: time('from'),
      to: time('to'),
    };
    void this.load(false);
  }

  private async verify(): Promise<void> {
    this.verification = null;
    const result = await this.attempt('Verifying the audit chain', () =>
      this.api.request<AuditVerification>(
        'POST',
        adminPath(['tenants', this.tenantId, 'audit', 'verify']),
      ),
    );
    if (result) {
      this.verification = result;
    }
  }

  override render(): TemplateResult {
    return html`<div class="toolbar">
        <h1>Audit log of ${this.tenantId}</h1>
        <button type="button" @click=${() => void this.verify()}>Verify chain</button>
      </div>
      ${this.verificationView()}
      <form class="panel" @submit=${(event: SubmitEvent) => this.applyFilter(event)}>
        <div class="row">
          <div>
            <label for="from">From</label>
            <input id="from" name="from" type="datetime-local" step="1" />
          </div>
          <div>
            <label for="to">To</label>
            <input id="to" name="to" type="datetime-local" step="1" />
          </div>
          <div>
            <label for="principal">Principal</label>
            <input id="principal" name="principal" />
          </div>
          <div>
            <label for="operation">Operation</label>
            <input id="operation" name="operation" />
          </div>
          <div>
            <label for="resource">Resource</label>
            <input id="resource" name="resource" />
          </div>
          <div>
            <label for="outcome">Outcome</label>
            <select id="outcome" name="outcome">
              <option value="">any</option>
              ${AUDIT_OUTCOMES.map((outcome) => html`<option value=${outcome}>${outcome}</option>`)}
            </select>
          </div>
          <button type="submit">Filter</button>
        </div>
      </form>
      ${this.feedback()} ${this.records ? this.table(this.records) : nothing}
      ${this.nextCursor
        ? html`<button type="button" class="secondary" @click=${() => void this.load(true)}>
            Load more
          </button>`
        : nothing}`;
  }

  private verificationView(): TemplateResult | typeof nothing {
    const result = this.verification;
    if (!result) {
      return nothing;
    }
    if (result.ok) {
      return html`<section class="panel" role="status" aria-labelledby="verified">
        <h2 id="verified" class="ok">Chain verified: ${result.records} records, unbroken</h2>
        ${result.head
          ? html`<p>Head (keep it where the database's users cannot write):</p>
              <pre>${JSON.stringify(result.head, null, 2)}</pre>`
          : nothing}
      </section>`;
    }
    const broken = result.firstBroken;
    return html`<section class="panel" aria-labelledby="broken" role="alert">
      <h2 id="broken" class="error">Chain broken after checking ${result.records} records</h2>
      <p>
        First broken record: seq ${broken?.seq ?? '?'} (${broken?.recordId ?? 'unknown record'}):
        ${broken?.problem ?? 'unknown problem'}
      </p>
    </section>`;
  }

  private table(records: readonly AuditRecord[]): TemplateResult {
    if (records.length === 0) {
      return html`<p>No records match.</p>`;
    }
    return html`<div class="scroll">
      <table>
        <caption class="visually-hidden">
          Audit records
        </caption>
        <thead>
          <tr>
            <th scope="col">Seq</th>
            <th scope="col">Time</th>
            <th scope="col">Principal</th>
            <th scope="col">Operation</th>
            <th scope="col">Binding</th>
            <th scope="col">Resource</th>
            <th scope="col">Outcome</th>
            <th scope="col">Reason</th>
            <th scope="col">Source</th>
          </tr>
        </thead>
        <tbody>
          ${records.map(
            (record) =>
              html`<tr>
                <td>${record.seq}</td>
                <td>${when(record.occurredAt)}</td>
                <td>${record.principalId ?? '—'}</td>
                <td>${record.operation}</td>
                <td>${record.binding}</td>
                <td>${record.resource ?? '—'}</td>
                <td class=${record.outcome === 'ok' ? 'state-delivered' : 'state-dead'}>
                  ${record.outcome}
                </td>
                <td>${record.reason ?? ''}</td>
                <td>${record.sourceAddress ?? ''}</td>
              </tr>`,
          )}
        </tbody>
      </table>
    </div>`;
  }
}

customElements.define('a2a-op-audit', AuditLogPage);
