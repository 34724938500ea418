import { ConfigError } from '../../config.ts';

/** `dev`: the Temporal CLI's dev server (SQLite); `server`: Temporal server on Postgres, as production runs. */
export type TemporalKind = 'dev' | 'server';

/** The Temporal `value` names (`source` says where it came from, for the sentence when it names none). */
export function temporalKind(value: string | undefined, source: string): TemporalKind {
  if (value === undefined || value === '' || value === 'dev') return 'dev';
  if (value === 'server') return 'server';
  throw new ConfigError(
    `${source} takes dev (the Temporal CLI's dev server) or server (Temporal server on Postgres), not "${value}"`,
  );
}

export interface DevOptions {
  demo: boolean;
  temporal: TemporalKind;
}

/** `llmgw dev [--demo] [--temporal dev|server]`: the arguments after `dev`. */
export function devOptions(args: readonly string[]): DevOptions {
  const options: DevOptions = { demo: false, temporal: 'dev' };
  for (let index = 0; index < args.length; index++) {
    const arg = args[index];
    if (arg === '--demo') options.demo = true;
    else if (arg === '--temporal' || arg.startsWith('--temporal=')) {
      const value = arg === '--temporal' ? args[++index] : arg.slice('--temporal='.length);
      if (!value) throw new ConfigError('--temporal needs a value: dev or server');
      options.temporal = temporalKind(value, '--temporal');
    } else throw new ConfigError(`llmgw dev takes --demo and --temporal dev|server, not "${arg}"`);
  }
  return options;
}
