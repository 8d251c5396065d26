import { randomUUID } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';

/** The time the task-service stamps on commands; injected so that handlers can be tested at fixed times. */
export abstract class Clock {
  abstract now(): Date;
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }
}

/** Where new ids come from; injected for the same reason as the clock. */
export abstract class IdGenerator {
  /** A task or context id the platform assigns (random: ids are not guessable). */
  abstract randomId(): string;
  /** An event id (time-ordered). */
  abstract eventId(): string;
}

export class RandomIds extends IdGenerator {
  randomId(): string {
    return randomUUID();
  }

  eventId(): string {
    return uuidv7();
  }
}
