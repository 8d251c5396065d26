/** A refused or failed call to the admin API or an A2A binding, with what the server said. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
  }
}

/** JSON over HTTP with a bearer credential, same origin as the console. */
export class JsonClient {
  constructor(private readonly token: () => string | null) {}

  headers(extra: Record<string, string> = {}): Record<string, string> {
    const token = this.token();
    return {
      accept: 'application/json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...extra,
    };
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(path, {
      method,
      headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed: unknown = text === '' ? null : safeJson(text);
    if (!response.ok) {
      throw new ApiError(response.status, errorMessage(response.status, parsed, text), parsed);
    }
    return parsed as T;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function errorMessage(status: number, parsed: unknown, text: string): string {
  if (parsed && typeof parsed === 'object') {
    const record = parsed as Record<string, unknown>;
    const error = record['error'];
    if (error && typeof error === 'object' && 'message' in error) {
      return `${status}: ${String((error as { message: unknown }).message)}`;
    }
    if (typeof record['message'] === 'string') {
      return `${status}: ${record['message']}`;
    }
  }
  return `${status}: ${text.slice(0, 200) || 'no body'}`;
}
