/**
 * Runs `work` every `everyMs` after the previous run ended (never two at once), until stopped; a failed
 * run is passed to `failed` and the next one follows. `stop` waits for a run under way to end.
 */
export class Repeating {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;

  constructor(
    private readonly work: () => Promise<void>,
    private readonly everyMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  start(): void {
    const loop = () => {
      this.running = this.work()
        .catch(this.failed)
        .finally(() => {
          this.running = null;
          if (this.timer) this.timer = setTimeout(loop, this.everyMs);
        });
    };
    this.timer = setTimeout(loop, this.everyMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
