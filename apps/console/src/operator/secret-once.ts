import { html, LitElement, type TemplateResult } from 'lit';
import { theme } from '../shared/theme';
import { operatorStyles } from './page';

/**
 * A secret the admin API answered once (an API key, a worker credential, an admin key): shown with a copy
 * button until the operator dismisses it, then gone (it lives in this element only, never in storage).
 * Dispatches `dismiss` when done.
 */
export class SecretOnce extends LitElement {
  static override styles = [theme, operatorStyles];
  static override properties = {
    secret: { attribute: false },
    what: { attribute: false },
    copied: { state: true },
  };

  declare secret: string;
  declare what: string;
  declare copied: string;

  constructor() {
    super();
    this.secret = '';
    this.what = 'secret';
    this.copied = '';
  }

  /** Keyboard and screen reader users land on the secret, selected, with Copy next. */
  override firstUpdated(): void {
    const field = this.renderRoot.querySelector('input');
    field?.focus();
    field?.select();
  }

  private async copy(): Promise<void> {
    try {
      await navigator.clipboard.writeText(this.secret);
      this.copied = 'Copied to the clipboard.';
    } catch {
      this.copied = 'The browser refused the clipboard: select the secret and copy it.';
    }
  }

  override render(): TemplateResult {
    return html`<section class="panel secret" aria-labelledby="secret-title">
      <h2 id="secret-title">New ${this.what}: copy it now, it is not shown again</h2>
      <label for="secret">New ${this.what}</label>
      <input id="secret" class="secret-value" readonly .value=${this.secret} />
      <div class="row">
        <button type="button" @click=${() => void this.copy()}>Copy</button>
        <button
          type="button"
          class="secondary"
          @click=${() => this.dispatchEvent(new Event('dismiss'))}
        >
          Done
        </button>
        <span role="status">${this.copied}</span>
      </div>
    </section>`;
  }
}

customElements.define('a2a-op-secret', SecretOnce);
