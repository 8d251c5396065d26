import { html, type TemplateResult } from 'lit';
import { KeysPage } from './keys-page';
import type { AdminKey } from './types';

/** The platform's admin keys (platform admins only). */
export class AdminKeysPage extends KeysPage<AdminKey> {
  protected readonly noun = 'admin key';
  protected readonly listMember = 'adminKeys';

  protected collection(): string[] {
    return ['admin-keys'];
  }

  protected heading(): string {
    return 'Admin keys';
  }

  protected override intro(): TemplateResult {
    return html`<p class="muted">Admin keys may do everything on every tenant.</p>`;
  }
}

customElements.define('a2a-op-admin-keys', AdminKeysPage);
