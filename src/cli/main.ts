// Only what every command needs is imported here, each command's own modules when it runs: through
// tsx, the whole graph (Temporal's worker, Postgres, the API) took a second to load, which `llmgw ctl`
// and `llmgw sim-engine` (as the Docker image runs it; bin/llmgw.mjs takes it a shorter way) do not need.
import { forgetSecrets } from '../child-process.ts';
import { ConfigError, readConfig } from '../config.ts';
import { devOptions } from './dev/options.ts';
import { stopsWithParent } from './parent-watch.ts';

const USAGE = `usage: llmgw <command>

commands:
  dev      everything on one machine: embedded Postgres, Temporal dev server + Web UI, worker, API,
           simulated cluster (npm start); --demo seeds a story and a load generator (npm run demo);
           --temporal server runs Temporal server on that Postgres instead of the dev server
  serve    the HTTP API and the gateway (needs DATABASE_URL and TEMPORAL_ADDRESS; LLMGW_ADMIN_TOKEN
           while the store holds no admin token)
  gateway  the OpenAI-compatible gateway alone, on LLMGW_GATEWAY_PORT (needs DATABASE_URL and
           TEMPORAL_ADDRESS)
  worker   the reconcilers' worker and the simulated cluster of LLMGW_SIM_CLUSTER (needs DATABASE_URL
           and TEMPORAL_ADDRESS)
  migrate  apply the store's migrations and exit
  ctl      the operator's command line, a client of the HTTP API (llmgw ctl --help)
  simulate llmgw's policy against its peers on real traces, on a simulated clock (llmgw simulate --help)
  sim-engine  the simulated engine as a process of its own, as an agent runs it (llmgw sim-engine --help)
  agent    one GPU machine's agent: registers its node and runs its engines (llmgw agent --help)

Configuration is read from the environment; see README.md.`;

/**
 * Stops cleanly on Ctrl-C, SIGTERM, or, under an npm script, when npm goes away without passing a signal
 * on (parent-watch.ts).
 */
function onStopSignal(stop: () => Promise<void>) {
  let stopping = false;
  const stopFor = (why: string) => {
    if (stopping) return;
    stopping = true;
    console.info(`\n${why}: stopping ...`);
    stop().then(
      () => process.exit(0),
      (error) => {
        console.error(String(error));
        process.exit(1);
      },
    );
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stopFor(signal));
  if (!stopsWithParent(process.argv[2], process.env)) return;
  const parent = process.ppid;
  setInterval(() => process.ppid !== parent && stopFor('the parent process (npm) exited'), 1000).unref();
}

function required(value: string | undefined, name: string): string {
  if (!value)
    throw new ConfigError(`${name} is not set; llmgw ${process.argv[2]} needs it (llmgw dev does not)`);
  return value;
}

/** The demo's clocks are quicker so that its story plays out in minutes; the environment still wins. */
const DEMO_DEFAULTS = { LLMGW_SCALE_DOWN_WINDOW_S: '30', LLMGW_RESYNC_S: '10' };

async function main(command: string | undefined) {
  const dev = devOptions(command === 'dev' ? process.argv.slice(3) : []);
  let config = readConfig(dev.demo ? { ...DEMO_DEFAULTS, ...process.env } : process.env);
  // Config keeps the secrets; the children of this process (the ones libraries start too) do not get them.
  forgetSecrets();
  switch (command) {
    case 'dev':
      onStopSignal(await (await import('./dev.ts')).runDev(config, dev));
      return;
    case 'serve':
    case 'gateway':
    case 'worker': {
      // Even one worker: it then runs with the V8 flags of workers.ts, and is started again if it dies.
      if (command === 'gateway') {
        const workers = await import('../gateway/workers.ts');
        if (!workers.isGatewayWorker()) {
          onStopSignal(workers.forkGatewayWorkers(config));
          const count = config.gateway.workers;
          console.info(
            `llmgw gateway: ${count} worker process${count === 1 ? '' : 'es'} on port ${config.gateway.port}`,
          );
          return;
        }
        config = await workers.workerConfig(config);
      }
      const { connect } = await import('../store/db.ts');
      const { migrate } = await import('../store/migrate.ts');
      const sql = connect(required(config.databaseUrl, 'DATABASE_URL'));
      const temporalAddress = required(config.temporalAddress, 'TEMPORAL_ADDRESS');
      await migrate(sql);
      if (command === 'serve') {
        await (await import('../auth/bootstrap.ts')).refuseWithoutAdmin(sql, config.adminToken);
      }
      const running: { stop(): Promise<void> }[] = [];
      if (command === 'serve') {
        const api = await (await import('./serve.ts')).startApi({ config, sql, temporalAddress });
        running.push(api);
        console.info(`llmgw API on ${api.url}`);
      }
      if (command === 'serve' || command === 'gateway') {
        const gateway = await (await import('./gateway.ts')).runGateway({ config, sql, temporalAddress });
        running.push(gateway);
        console.info(`llmgw gateway on ${gateway.url}/v1 (load source ${gateway.source})`);
      }
      if (command === 'worker') {
        running.push(await (await import('./worker.ts')).startWorker({ config, sql, temporalAddress }));
        console.info(`llmgw worker on task queue ${config.taskQueue}`);
      }
      onStopSignal(async () => {
        for (const part of running.reverse()) await part.stop();
        await sql.end({ timeout: 5 });
      });
      return;
    }
    case 'ctl':
      return (await import('./ctl/index.ts')).ctlMain(process.argv.slice(3));
    case 'simulate':
      return (await import('./simulate.ts')).runSimulate(process.argv.slice(3));
    case 'agent': {
      const stop = await (await import('./agent.ts')).runAgent(process.argv.slice(3));
      if (stop) onStopSignal(stop);
      return;
    }
    case 'sim-engine':
      return (await import('./sim-engine.ts')).runSimEngine(process.argv.slice(3));
    case 'migrate': {
      const { connect } = await import('../store/db.ts');
      const { migrate } = await import('../store/migrate.ts');
      const sql = connect(required(config.databaseUrl, 'DATABASE_URL'));
      const applied = await migrate(sql);
      console.info(applied.length ? `applied ${applied.join(', ')}` : 'nothing to apply');
      await sql.end();
      return;
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      console.info(USAGE);
      return;
    default:
      console.error(`llmgw: unknown command "${command}"\n\n${USAGE}`);
      process.exit(2);
  }
}

main(process.argv[2]).catch((error) => {
  console.error(`llmgw: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(error instanceof ConfigError ? 2 : 1);
});
