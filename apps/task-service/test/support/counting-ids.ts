import { IdGenerator } from '../../src/clock';

/** Ids that count up (`id-1`, `id-2`, …; event ids as UUIDs), so that unit tests can name what they expect. */
export class CountingIds extends IdGenerator {
  private next = 0;

  randomId(): string {
    return `id-${++this.next}`;
  }

  eventId(): string {
    return `00000000-0000-7000-8000-${String(++this.next).padStart(12, '0')}`;
  }
}
