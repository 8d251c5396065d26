/** An admin API answer: its status and its JSON body (empty for none). */
export interface AdminAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** Admin API calls on `baseUrl` with the bearer `token`; `path` is the whole path (`/admin/v1/…`). */
export function adminClient(
  baseUrl: () => string,
  token: string,
): (method: string, path: string, body?: unknown) => Promise<AdminAnswer> {
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl()}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return {
      status: response.status,
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
    };
  };
}
