/** How a {@link Batcher} groups calls. */
export interface BatchLimits {
  /** Most calls in one batch. */
  maxBatch: number;
  /** Batches running at once; a call made while they all run waits for the next batch. */
  maxInFlight: number;
}

interface Waiting<Call, Result> {
  call: Call;
  resolve: (result: Result) => void;
  reject: (error: unknown) => void;
}

/**
 * Coalesces calls into batches, one statement each (group commit, as the task-service's writer does): the
 * calls made in one turn of the event loop, and those made while `maxInFlight` batches run, go together in
 * the next batch, so that under load one round trip serves many callers while a lone caller waits for
 * nothing but its own. `run` answers a batch with one result per call, in the calls' order; when it fails,
 * every call of the batch is rejected with its error.
 */
export class Batcher<Call, Result> {
  private queue: Waiting<Call, Result>[] = [];
  private inFlight = 0;
  /** A launch is scheduled for the next turn of the event loop. */
  private scheduled = false;

  constructor(
    private readonly run: (calls: readonly Call[]) => Promise<readonly Result[]>,
    private readonly limits: BatchLimits,
  ) {}

  submit(call: Call): Promise<Result> {
    return new Promise((resolve, reject) => {
      this.queue.push({ call, resolve, reject });
      this.kick();
    });
  }

  private kick(): void {
    if (this.scheduled || this.inFlight >= this.limits.maxInFlight) {
      return;
    }
    this.scheduled = true;
    // Let every call made in this turn of the event loop join the batch.
    setImmediate(() => {
      this.scheduled = false;
      this.launch();
    });
  }

  private launch(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight += 1;
      void this.execute(batch).finally(() => {
        this.inFlight -= 1;
        if (this.queue.length > 0) {
          this.kick();
        }
      });
    }
  }

  private async execute(batch: readonly Waiting<Call, Result>[]): Promise<void> {
    let results: readonly Result[];
    try {
      results = await this.run(batch.map((waiting) => waiting.call));
      if (results.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} calls got ${results.length} results`);
      }
    } catch (error) {
      batch.forEach((waiting) => waiting.reject(error));
      return;
    }
    results.forEach((result, index) => batch[index]?.resolve(result));
  }
}
