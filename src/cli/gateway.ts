import { Client } from '@temporalio/client';
import type { Config } from '../config.ts';
import { temporalAuth } from '../contracts/temporal-credentials.ts';
import { type RunningGateway, startGateway } from '../gateway/start.ts';
import { temporalReconcilers } from '../reconcilers/client.ts';
import type { Sql } from '../store/db.ts';
import { QuietConnection } from './quiet-connection.ts';

/** The gateway with a Temporal client of its own, to wake the reconcilers its load reports concern. */
export async function runGateway(options: {
  config: Config;
  sql: Sql;
  temporalAddress: string;
  port?: number;
  log?: Pick<Console, 'warn' | 'error'>;
}): Promise<RunningGateway> {
  const { config } = options;
  const connection = await QuietConnection.open({
    address: options.temporalAddress,
    ...temporalAuth(config.temporalKey),
  });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  try {
    const gateway = await startGateway({
      ...options,
      reconcilers: temporalReconcilers(client, config.taskQueue, options.log),
    });
    return {
      ...gateway,
      stop: async () => {
        await gateway.stop();
        await connection.close();
      },
    };
  } catch (error) {
    await connection.close();
    throw error;
  }
}
