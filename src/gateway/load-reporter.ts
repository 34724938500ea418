import { reportsAtOnce } from '../policy/load-zone.ts';

/** Reports of one model at most this often, unless its load crossed a line the reconciler acts on. */
export const REPORT_GAP_MS = 250;
/**
 * Every report this gateway made is marked fresh this often (or a third of the staleness bound, if
 * shorter), an idle model's zero included: its counts stand until it says otherwise, and a zero gone
 * stale would leave an idle model's load unknown, which never scales it down.
 */
export const REFRESH_EVERY_MS = 20_000;
export const refreshEvery = (loadStaleMs: number) => Math.min(REFRESH_EVERY_MS, loadStaleMs / 3);

/** A report that failed (the store is down) is tried again after this. */
const RETRY_AFTER_MS = 1000;

/**
 * Sends one model's counts, and while some wait since when they have waited without a break (ms since
 * epoch); resolves to the model's capacity at SLO, when the store knows it.
 */
export type SendLoad = (
  model: string,
  inFlight: number,
  waiting: number,
  waitingSince?: number,
) => Promise<number | undefined>;
/** Marks every report this gateway made fresh again (in one statement), every `everyMs`. */
export interface RefreshLoad {
  everyMs: number;
  run(): Promise<void>;
}

interface ModelCounts {
  inFlight: number;
  waiting: number;
  /** When `waiting` last went from none to some (this.now()); none while none wait. */
  waitingSince?: number;
  /** The total last sent, and when. */
  sent?: { total: number; at: number };
  /** The model's capacity at SLO, from the last answer. */
  capacity?: number;
  sending: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * This gateway's requests in flight (sent to a replica) and waiting (held for one), per model, and
 * their reports as the load source `gateway:<instance>`. A rise the reconciler acts on at once (from no
 * load, or over the model's capacity at SLO: policy/load-zone.ts reportsAtOnce) is sent at once, so the
 * only pacing a wake meets is the load signals'; other changes at most every REPORT_GAP_MS. Every `refresh.everyMs` all of them are marked fresh at once, so unchanged
 * counts, none included, are not sent again.
 */
export class LoadReporter {
  private readonly models = new Map<string, ModelCounts>();
  private readonly refresher: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly send: SendLoad,
    refresh: RefreshLoad,
    private readonly log: Pick<Console, 'warn'> = console,
    private readonly now: () => number = Date.now,
  ) {
    this.refresher = setInterval(() => {
      if (this.models.size === 0) return;
      refresh
        .run()
        .catch((error) => this.log.warn(`gateway: could not refresh its load reports: ${String(error)}`));
    }, refresh.everyMs);
    this.refresher.unref();
  }

  /** The models with requests in flight, and how many. */
  inFlightCounts(): Map<string, number> {
    return new Map(
      [...this.models].filter(([, counts]) => counts.inFlight > 0).map(([model, c]) => [model, c.inFlight]),
    );
  }

  /** Adds (or with a negative delta removes) requests in flight and waiting for a model. */
  change(model: string, inFlight: number, waiting: number) {
    let counts = this.models.get(model);
    if (!counts) {
      counts = { inFlight: 0, waiting: 0, sending: false };
      this.models.set(model, counts);
    }
    const waited = counts.waiting > 0;
    counts.inFlight += inFlight;
    counts.waiting += waiting;
    // A queue that empties and fills again is a new one: the policy learns it as a new burst.
    if (counts.waiting <= 0) counts.waitingSince = undefined;
    else if (!waited) counts.waitingSince = this.now();
    this.schedule(model, counts);
  }

  /**
   * Stops the timers and sends nothing more (the requests a stopping gateway closes end after this; a
   * report of them would wake reconcilers for a gateway that is gone). The reports sent expire on their own.
   */
  stop() {
    this.stopped = true;
    clearInterval(this.refresher);
    for (const counts of this.models.values()) clearTimeout(counts.timer);
  }

  // Runs at every request's start and end: a report already timed is left as it is (it sends the
  // counts as they are when it fires), so that no request sets a timer of its own.
  private schedule(model: string, counts: ModelCounts) {
    if (counts.sending || this.stopped) return; // sent again when the report under way is done
    const total = counts.inFlight + counts.waiting;
    const { sent } = counts;
    if (!sent || reportsAtOnce(sent.total, total, counts.capacity)) {
      clearTimeout(counts.timer);
      counts.timer = undefined;
      return void this.flush(model, counts);
    }
    if (counts.timer || total === sent.total) return;
    counts.timer = setTimeout(
      () => {
        counts.timer = undefined;
        // Back where it was last reported: nothing to send.
        if (counts.inFlight + counts.waiting !== counts.sent?.total) void this.flush(model, counts);
      },
      Math.max(0, sent.at + REPORT_GAP_MS - this.now()),
    );
    counts.timer.unref();
  }

  private async flush(model: string, counts: ModelCounts) {
    counts.sending = true;
    const { inFlight, waiting, waitingSince } = counts;
    try {
      counts.capacity = (await this.send(model, inFlight, waiting, waitingSince)) ?? counts.capacity;
      counts.sent = { total: inFlight + waiting, at: this.now() };
    } catch (error) {
      this.log.warn(`gateway: could not report the load of ${model}: ${String(error)}`);
      counts.sending = false;
      if (this.stopped) return;
      counts.timer = setTimeout(() => {
        counts.timer = undefined;
        void this.flush(model, counts);
      }, RETRY_AFTER_MS);
      counts.timer.unref();
      return;
    }
    counts.sending = false;
    this.schedule(model, counts);
  }
}
