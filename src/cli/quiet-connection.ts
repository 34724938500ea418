import { type CallContext, Connection, type ConnectionOptions } from '@temporalio/client';

/**
 * A Temporal connection whose call context (deadline, metadata such as the namespace header) holds while
 * `run`'s callback runs synchronously, instead of in an AsyncLocalStorage. On Node 20 the first
 * AsyncLocalStorage.run turns promise hooks on for the rest of the process, and the client runs one for
 * every call (the namespace header), so a gateway paid for the hooks on every promise of every request
 * (some 3.5% of a worker's CPU samples; docs/gateway.md has what the bench shows). The client reads the
 * context where it starts each call, synchronously inside the run that set it (its RPC implementation,
 * connection.ts in @temporalio/client), which is all this keeps; test/integration/quiet-connection.test.ts
 * checks both. Nothing in the gateway sets a context around its own awaits, which this would not carry.
 */
export class QuietConnection extends Connection {
  /** Connection.connect, with the call context kept synchronously before its check runs. */
  static async open(options: ConnectionOptions): Promise<QuietConnection> {
    const connection = QuietConnection.lazy(options) as QuietConnection;
    connection.keepContextSynchronously();
    try {
      await connection.ensureConnected();
    } catch (error) {
      await connection.close();
      throw error;
    }
    return connection;
  }

  private keepContextSynchronously() {
    const storage = this.callContextStorage;
    let current: CallContext | undefined;
    storage.getStore = () => current;
    storage.run = <R, A extends unknown[]>(store: CallContext, callback: (...args: A) => R, ...args: A) => {
      const outer = current;
      current = store;
      try {
        return callback(...args);
      } finally {
        current = outer;
      }
    };
  }
}
