import postgres from 'postgres';

export type Sql = postgres.Sql;
export type Tx = postgres.TransactionSql;
/** The store or a transaction of it: store calls take either, so that a change and its audit entry commit together. */
export type Db = Sql | Tx;

/**
 * Runs `work` in a transaction of its own, or in a savepoint of the caller's transaction.
 * sql.begin needs patches/postgres+3.4.9.patch (applied on install): without it, postgres.js 3.4.9 fails a
 * transaction whose BEGIN fills a connection's pipeline (UNSAFE_TRANSACTION, porsager/postgres#1189), and a
 * connection lost in a transaction crashes the process and fails the next query of its pool slot.
 */
export function transaction<T>(db: Db, work: (tx: Tx) => Promise<T>): Promise<T> {
  return ('begin' in db ? db.begin(work) : db.savepoint(work)) as Promise<T>;
}

/** The store could not be reached; the API answers 503 and activities retry. */
export class StoreUnavailable extends Error {
  constructor(cause: unknown) {
    super('the store (Postgres) is unreachable', { cause });
    this.name = 'StoreUnavailable';
  }
}

const CONNECTION_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
]);

export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code !== undefined && CONNECTION_ERRORS.has(code);
}

/**
 * A failure of the store itself (unreachable, or refusing a statement), not of the caller's input: what
 * the metrics count as a store error. Classified here, beside the errors the store raises.
 */
export function isStoreError(error: unknown): boolean {
  return (
    error instanceof StoreUnavailable || error instanceof postgres.PostgresError || isConnectionError(error)
  );
}

/** Text Postgres cannot keep (a NUL character, in text or JSON): bad input, not a failure of the store. */
const UNSTORABLE_TEXT = new Set([
  '22021', // character_not_in_repertoire: "invalid byte sequence for encoding UTF8: 0x00"
  '22P05', // untranslatable_character: "unsupported Unicode escape sequence" (\u0000 in jsonb)
]);

export function isUnstorableText(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code !== undefined && UNSTORABLE_TEXT.has(code);
}

export function connect(url: string, options: { max?: number } = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    connect_timeout: 5,
    idle_timeout: 30,
    onnotice: () => {},
  });
}

/** Runs a store call and turns a lost connection into StoreUnavailable. */
export async function guarded<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw isConnectionError(error) ? new StoreUnavailable(error) : error;
  }
}
