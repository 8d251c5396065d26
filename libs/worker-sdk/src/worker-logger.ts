/** The logging port of the SDK; `console` and most structured loggers fit it. */
export interface WorkerLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

type Level = 'INFO' | 'WARN' | 'ERROR';

function line(level: Level, message: string, fields: Record<string, unknown> | undefined): string {
  const pairs = Object.entries(fields ?? {}).map(([key, value]) => {
    const text = value instanceof Error ? value.message : value;
    return `${key}=${typeof text === 'string' ? text : JSON.stringify(text)}`;
  });
  return [new Date().toISOString(), level, 'agent-worker:', message, ...pairs].join(' ');
}

/** The default logger: one line per entry on stdout/stderr, debug entries dropped. */
export const consoleWorkerLogger: WorkerLogger = {
  debug: () => undefined,
  info: (message, fields) => console.log(line('INFO', message, fields)),
  warn: (message, fields) => console.warn(line('WARN', message, fields)),
  error: (message, fields) => console.error(line('ERROR', message, fields)),
};
