import type { KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';

/** How an informer watches: client-node's Watch, or a test's stand-in. */
export interface Watcher {
  watch(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    event: (type: string, object: unknown) => void,
    done: (error: unknown) => void,
  ): Promise<{ abort(): void }>;
}

/** How long a watch asks the API server to keep it open before it ends it (and it is opened again). */
const WATCH_TIMEOUT_S = 240;
/** After a failed list or watch: the first wait, doubled each failure up to the most. */
const RETRY_FIRST_MS = 250;
const RETRY_MAX_MS = 10_000;

/**
 * Keeps a copy of a kind of object in memory, as client-go's informers do: list, then watch from the
 * list's resourceVersion with bookmarks (the server moves the resourceVersion on while nothing changes,
 * so that a watch reopened after a quiet hour need not relist), reopen the watch from the last version
 * seen when it ends, and list again when the server says that version is gone (410 Gone: compacted).
 * `changed` is called after each list and each event, with the whole copy: the callers recompute what
 * they derive from it rather than patch it, so a missed event cannot leave them wrong past the next one.
 * client-node's own ListWatch neither asks for bookmarks nor reopens after an error other than 410.
 */
export class Informer<T extends KubernetesObject> {
  private readonly objects = new Map<string, T>();
  private resourceVersion = '';
  private request: { abort(): void } | null = null;
  private stopped = false;
  private retryMs = RETRY_FIRST_MS;
  private retryTimer: NodeJS.Timeout | null = null;
  private firstList: { resolve: () => void; promise: Promise<void> };
  /** How many times it listed: 1 after its start, one more for each 410 Gone (tests read it). */
  lists = 0;

  constructor(
    private readonly what: string,
    private readonly path: string,
    private readonly list: () => Promise<KubernetesListObject<T>>,
    private readonly watcher: Watcher,
    private readonly changed: (objects: readonly T[]) => void,
    private readonly log: Pick<Console, 'warn'> = console,
    private readonly query: Record<string, string> = {},
  ) {
    let resolve = () => {};
    const promise = new Promise<void>((done) => {
      resolve = done;
    });
    this.firstList = { resolve, promise };
  }

  /** Starts listing and watching; resolves once the first list is in. */
  start(): Promise<void> {
    void this.relist();
    return this.firstList.promise;
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.request?.abort();
    this.request = null;
  }

  current(): T[] {
    return [...this.objects.values()];
  }

  private async relist(): Promise<void> {
    if (this.stopped) return;
    let listed: KubernetesListObject<T>;
    try {
      listed = await this.list();
    } catch (error) {
      this.retry(`listing ${this.what} failed: ${describe(error)}`, () => this.relist());
      return;
    }
    if (this.stopped) return;
    this.lists += 1;
    this.objects.clear();
    for (const object of listed.items) this.objects.set(key(object), object);
    this.resourceVersion = listed.metadata?.resourceVersion ?? '';
    this.firstList.resolve();
    this.changed(this.current());
    await this.watch();
  }

  private async watch(): Promise<void> {
    if (this.stopped) return;
    let gone = false;
    const query = {
      ...this.query,
      resourceVersion: this.resourceVersion,
      allowWatchBookmarks: true,
      timeoutSeconds: WATCH_TIMEOUT_S,
    };
    const onEvent = (type: string, object: unknown) => {
      const item = object as T & { code?: number };
      if (type === 'ERROR') {
        // The version asked for was compacted away: only a new list is a true copy again.
        if (item.code === 410) gone = true;
        return;
      }
      const version = item.metadata?.resourceVersion;
      if (version) this.resourceVersion = version;
      if (type === 'BOOKMARK') return;
      if (type === 'DELETED') this.objects.delete(key(item));
      else this.objects.set(key(item), item);
      this.retryMs = RETRY_FIRST_MS;
      this.changed(this.current());
    };
    const onDone = (error: unknown) => {
      this.request = null;
      if (this.stopped) return;
      if (gone || statusOf(error) === 410) {
        void this.relist();
      } else if (error) {
        this.retry(`watching ${this.what} failed: ${describe(error)}`, () => this.watch());
      } else {
        // The server ended the watch (its timeout): open it again from where it was.
        void this.watch();
      }
    };
    try {
      const request = await this.watcher.watch(this.path, query, onEvent, onDone);
      if (this.stopped) request.abort();
      else this.request = request;
    } catch (error) {
      onDone(error);
    }
  }

  private retry(why: string, again: () => Promise<void>): void {
    if (this.stopped) return;
    this.log.warn(`kubernetes: ${why}; again in ${this.retryMs} ms`);
    this.retryTimer = setTimeout(() => void again(), this.retryMs);
    this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
  }
}

const key = (object: KubernetesObject) =>
  `${object.metadata?.namespace ?? ''}/${object.metadata?.name ?? ''}`;

function statusOf(error: unknown): number | undefined {
  const value = error as { statusCode?: number; code?: number } | null;
  return value?.statusCode ?? value?.code;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
