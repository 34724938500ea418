import type { Command, OptionSpec } from './command.ts';
import { GLOBAL_OPTIONS } from './options.ts';

const flag = (name: string, spec: OptionSpec) =>
  `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;

function optionLines(options: Record<string, OptionSpec>): string[] {
  const entries = Object.entries(options);
  const width = Math.max(...entries.map(([name, spec]) => flag(name, spec).length));
  return entries.map(([name, spec]) => `  ${flag(name, spec).padEnd(width)}  ${spec.description}`);
}

export function usageLine(command: Command): string {
  const options = Object.entries(command.options ?? {}).map(([name, spec]) => {
    const shown = `--${name}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
    return spec.required ? shown : `[${shown}]`;
  });
  return ['usage: llmgw ctl', command.path, command.args, ...options].filter(Boolean).join(' ');
}

/** `llmgw ctl <command> --help`. */
export function commandHelp(command: Command): string {
  return [
    usageLine(command),
    '',
    command.summary,
    ...(command.details ? ['', command.details] : []),
    ...(command.options ? ['', 'options:', ...optionLines(command.options)] : []),
    '',
    'global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'examples:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}

/** `llmgw ctl --help`, or the commands that start with `prefix` (`llmgw ctl quota`). */
export function listHelp(commands: readonly Command[], prefix?: string): string {
  const shown = prefix ? commands.filter((command) => command.path.split(' ')[0] === prefix) : commands;
  const names = shown.map((command) => [command.path, command.args].filter(Boolean).join(' '));
  const width = Math.max(...names.map((name) => name.length));
  return [
    ['usage: llmgw ctl', prefix, 'COMMAND [options]'].filter(Boolean).join(' '),
    '',
    prefix
      ? `The ${prefix} commands of llmgw ctl.`
      : 'The operator command line of llmgw, a client of its HTTP API (API.md).',
    '',
    'commands:',
    ...shown.map((command, i) => `  ${names[i].padEnd(width)}  ${command.summary}`),
    '',
    'global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    `Run llmgw ctl ${prefix ? `${prefix} ` : ''}COMMAND --help for a command's options and examples.`,
    'Exit codes: 0 done, 1 refused by the server (its sentence on stderr) or failed, 2 usage error.',
  ].join('\n');
}
