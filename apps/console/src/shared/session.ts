/**
 * The signed-in credential of one face of the console, kept in sessionStorage: it lives as long as the tab and
 * is never written anywhere else (no cookie, no localStorage), so closing the tab signs out.
 */
export class CredentialSession {
  constructor(private readonly key: string) {}

  get token(): string | null {
    return sessionStorage.getItem(this.key);
  }

  signIn(token: string): void {
    sessionStorage.setItem(this.key, token);
  }

  signOut(): void {
    sessionStorage.removeItem(this.key);
  }
}

/** The trimmed text of a form's field (empty when absent or a file). */
export function fieldText(form: HTMLFormElement, name: string): string {
  const value = new FormData(form).get(name);
  return typeof value === 'string' ? value.trim() : '';
}
