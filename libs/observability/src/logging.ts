import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, stdTimeFunctions, type DestinationStream, type Level, type Logger } from 'pino';
import type * as PinoPretty from 'pino-pretty';
import { currentLogContext } from './log-context';
import { censor, REDACTED_PATHS, scrubSecrets } from './redaction';

/** How a process writes its log (LOG_LEVEL, LOG_FORMAT). */
export interface LoggingOptions {
  /** The deployable, on every line as `app` (`ingress`, `task-service`, `standalone`, `agents`, …). */
  app: string;
  level: Level;
  /** `json`: one object per line; `pretty`: one readable line per entry, for people. */
  format: 'json' | 'pretty';
  /**
   * Where lines go (in either format); default stdout, written synchronously (a crash's last line is never
   * lost).
   */
  destination?: DestinationStream;
}

/**
 * An error as a log field: its class, message, code and stack (secrets scrubbed), and its cause. Errors
 * are logged with their stack, which `JSON.stringify` would drop.
 */
export function serializeError(value: unknown, depth = 0): unknown {
  if (!(value instanceof Error)) {
    return typeof value === 'string' ? scrubSecrets(value) : value;
  }
  const code = (value as { code?: unknown }).code;
  const reason = (value as { reason?: unknown }).reason;
  return {
    type: value.name,
    message: scrubSecrets(value.message),
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(value.stack ? { stack: scrubSecrets(value.stack) } : {}),
    ...(value.cause !== undefined && depth < 3
      ? { cause: serializeError(value.cause, depth + 1) }
      : {}),
  };
}

/**
 * The call fields of a line: the log context of the call being handled, and the ids of the span that is
 * recording it (or, with tracing off, the caller's trace id).
 */
function callFields(): Record<string, string> {
  const fields: Record<string, string> = { ...currentLogContext() };
  const span = trace.getActiveSpan()?.spanContext();
  if (span && isSpanContextValid(span)) {
    fields['traceId'] = span.traceId;
    fields['spanId'] = span.spanId;
  }
  return fields;
}

/**
 * Lines for people: time, level, app and component, the message, then the other fields on the same line.
 * pino-pretty is loaded here, by a process that writes such lines: JSON logs (every deployed process) never
 * load its 31 modules (ADR 0017).
 */
function prettyLines(out: DestinationStream, colorize: boolean): DestinationStream {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, see above
  const { prettyFactory } = require('pino-pretty') as typeof PinoPretty;
  const pretty = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    singleLine: true,
    ignore: 'pid,hostname,app,component',
    messageFormat: '{app}{if component} [{component}]{end} {msg}',
  });
  return { write: (line: string) => out.write(pretty(line)) };
}

/**
 * A process's root logger: JSON lines with `level` (its name), `time` (ISO 8601), `app`, the call fields,
 * `err` with its stack; secret fields removed and secrets in messages scrubbed.
 */
export function createLogger(options: LoggingOptions): Logger {
  const out = options.destination ?? pino.destination({ dest: 1, sync: true });
  const destination =
    options.format === 'pretty'
      ? prettyLines(out, !options.destination && process.stdout.isTTY)
      : out;
  return pino(
    {
      level: options.level,
      base: { app: options.app, pid: process.pid },
      timestamp: stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError, error: serializeError },
      redact: { paths: [...REDACTED_PATHS], censor },
      mixin: callFields,
      hooks: {
        logMethod(args, write) {
          const scrubbed = args.map((arg: unknown) =>
            typeof arg === 'string' ? scrubSecrets(arg) : arg,
          ) as Parameters<typeof write>;
          write.apply(this, scrubbed);
        },
      },
    },
    destination,
  );
}

let root: Logger | undefined;

/** The process's root logger ({@link installLogger}); a JSON logger at `info` before one is installed. */
export function rootLogger(): Logger {
  root ??= createLogger({ app: 'a2a', level: 'info', format: 'json' });
  return root;
}

/**
 * Makes `logger` the process's root logger. (A process that runs a Nest application also makes it the one
 * every Nest `Logger` writes to: `NestLoggerAdapter.install`.)
 */
export function installLogger(logger: Logger): void {
  root = logger;
}

/** A logger taking `(message, fields)`, the shape of the worker SDK's `WorkerLogger`. */
export interface FieldLogger {
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/** The root logger (the one installed when it logs) as a {@link FieldLogger} of `component`. */
export function fieldLogger(component: string): FieldLogger {
  let parent: Logger | undefined;
  let child: Logger | undefined;
  const logger = (): Logger => {
    const current = rootLogger();
    if (current !== parent || !child) {
      parent = current;
      child = current.child({ component });
    }
    return child;
  };
  return {
    debug: (message, fields) => logger().debug(fields ?? {}, message),
    info: (message, fields) => logger().info(fields ?? {}, message),
    warn: (message, fields) => logger().warn(fields ?? {}, message),
    error: (message, fields) => logger().error(fields ?? {}, message),
  };
}
