/** What a Deadlines list holds. Its links are its own fields, so that setting one allocates nothing. */
export interface Deadlined {
  /** When it is due (on the list's clock); set by Deadlines.set. */
  dueAt: number;
  earlier?: Deadlined;
  later?: Deadlined;
  /** The list it is on, if any. */
  list?: Deadlines;
  /** Called once it is due, after it left the list. */
  due(): void;
}

/**
 * Many deadlines on one timer: a list in the order they fall due, and one timer set for the first.
 * A request set two Node timers and cleared them (each a Timeout object, put in Node's lists and taken
 * out), and cleared and set its connection's socket timeout, which every read moved on: 5% of a
 * worker's busy CPU under the bench (docs/gateway.md "One timer for every deadline"). Here, on a list
 * of one kind of deadline (all as long), a new one is the latest: it goes at the end and touches no
 * timer. One cleared is only unlinked, even the last: the timer, when it fires with nothing due, is
 * set again for the first still listed, if any.
 */
export class Deadlines {
  private first?: Deadlined;
  private last?: Deadlined;
  private timer?: NodeJS.Timeout;
  /** When the timer fires (Infinity: none is set). */
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** `item` falls due `ms` from now, instead of when it was due before on any list. */
  set(item: Deadlined, ms: number) {
    item.list?.clear(item);
    item.dueAt = this.now() + ms;
    // From the end: a deadline is almost always the latest.
    let before = this.last;
    while (before && before.dueAt > item.dueAt) before = before.earlier;
    item.earlier = before;
    item.later = before ? before.later : this.first;
    if (item.later) item.later.earlier = item;
    else this.last = item;
    if (before) before.later = item;
    else this.first = item;
    item.list = this;
    if (item.dueAt < this.timerAt) this.arm(item.dueAt);
  }

  /** `item` is no longer due (nothing if it is not on this list). */
  clear(item: Deadlined) {
    if (item.list === this) this.unlink(item);
  }

  private unlink(item: Deadlined) {
    if (item.earlier) item.earlier.later = item.later;
    else this.first = item.later;
    if (item.later) item.later.earlier = item.earlier;
    else this.last = item.earlier;
    item.earlier = undefined;
    item.later = undefined;
    item.list = undefined;
  }

  private arm(at: number) {
    clearTimeout(this.timer);
    this.timerAt = at;
    // A timer may fire a little before `at` on this clock (its own is the event loop's, read at the
    // loop's turn): whatever is not yet due then waits for the next.
    // Unreferenced: a deadline alone keeps no process up (what it times out, a socket, does).
    this.timer = setTimeout(this.fire, Math.max(0, at - this.now())).unref();
  }

  private readonly fire = () => {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    while (this.first && this.first.dueAt <= now) {
      const item = this.first;
      this.unlink(item);
      item.due();
    }
    if (this.first && !this.timer) this.arm(Math.max(this.first.dueAt, now + 1));
  };
}
