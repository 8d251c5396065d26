import { Logger as NestLogger, type LoggerService } from '@nestjs/common';
import type { Level, Logger } from 'pino';
import { serializeError } from './logging';
import { scrubSecrets } from './redaction';

/** Nest's levels and pino's: Nest's `log` is `info`, `verbose` is `trace`. */
type NestLevel = 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
const LEVELS: Readonly<Record<NestLevel, Level>> = {
  log: 'info',
  error: 'error',
  warn: 'warn',
  debug: 'debug',
  verbose: 'trace',
  fatal: 'fatal',
};

/**
 * Nest's `LoggerService` on pino: a Nest logger's context becomes the `component` field; an `Error` given
 * as the message is logged as `err` with its stack, as is the stack Nest passes to `error`.
 */
export class NestLoggerAdapter implements LoggerService {
  private readonly components = new Map<string, Logger>();

  private constructor(private readonly logger: Logger) {}

  /** Makes every `new Logger(X)` and static `Logger.x(...)` of Nest write to `logger`. */
  static install(logger: Logger): void {
    NestLogger.overrideLogger(new NestLoggerAdapter(logger));
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', message, params);
  }

  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }

  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }

  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', message, params);
  }

  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  /**
   * Nest's calling convention: `(message, ...extra, context)` with the context last when there is one, and
   * `error(message, stack, context)`.
   */
  private write(level: NestLevel, message: unknown, params: unknown[]): void {
    const rest = [...params];
    const last = rest[rest.length - 1];
    const component = typeof last === 'string' && rest.length > 0 ? (rest.pop() as string) : '';
    if (level === 'error' && rest[0] === undefined) {
      rest.shift();
    }
    const logger = this.component(component);
    const pinoLevel = LEVELS[level];
    if (!logger.isLevelEnabled(pinoLevel)) {
      return;
    }
    const fields: Record<string, unknown> = {};
    const stack = level === 'error' && typeof rest[0] === 'string' ? rest.shift() : undefined;
    if (stack !== undefined) {
      fields['err'] = { stack: scrubSecrets(stack as string) };
    }
    if (rest.length > 0) {
      fields['details'] = rest.map((detail) => serializeError(detail));
    }
    if (message instanceof Error) {
      logger[pinoLevel]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      logger[pinoLevel]({ ...fields, ...message });
    } else {
      logger[pinoLevel](fields, String(message));
    }
  }

  private component(name: string): Logger {
    let logger = this.components.get(name);
    if (!logger) {
      logger = name === '' ? this.logger : this.logger.child({ component: name });
      this.components.set(name, logger);
    }
    return logger;
  }
}
