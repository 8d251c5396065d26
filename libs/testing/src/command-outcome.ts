/** A failed execFile's exit code or signal and its output (Node's own message repeats stderr). */
export function commandOutcome(err: unknown): string {
  const failure = err as {
    code?: number | string;
    signal?: string | null;
    stdout?: string;
    stderr?: string;
  };
  const how = failure.signal
    ? `killed by ${String(failure.signal)}`
    : `exit code ${String(failure.code)}`;
  return `${how}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`;
}
