import { html, LitElement, type TemplateResult } from 'lit';
import { CredentialSession, fieldText } from '../shared/session';
import { theme } from '../shared/theme';

/** The agent user's face of the console: signed in with a tenant API key, it talks A2A to the tenant's agents. */
export class PlaygroundApp extends LitElement {
  static override styles = theme;
  static override properties = { signedIn: { state: true } };

  declare signedIn: boolean;
  private readonly session = new CredentialSession('a2a-console.api-key');

  constructor() {
    super();
    this.signedIn = this.session.token !== null;
  }

  private signIn(event: SubmitEvent): void {
    event.preventDefault();
    this.session.signIn(fieldText(event.target as HTMLFormElement, 'apiKey'));
    this.signedIn = true;
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
      </main>`;
    }
    return html`<main><h1>Agent playground</h1></main>`;
  }
}

customElements.define('a2a-playground-app', PlaygroundApp);
