/**
 * Whether a long-running command stops when the process that started it exits. Only under an npm script
 * (`npm start`, `npm run llmgw -- ...`): npm may exit on Ctrl-C without passing the signal on, which
 * would leave the command running with no terminal. Started any other way (systemd, compose, a shell's
 * `&` or `setsid`, npx) a command is a daemon whose parent may come and go, and an agent always is: its
 * engines outlive it anyway, and a restarted agent adopts them.
 */
export function stopsWithParent(command: string | undefined, env: NodeJS.ProcessEnv): boolean {
  if (command === 'agent') return false;
  // npm sets npm_command for the scripts it runs: run-script (npm run), start, test ...; exec for npx.
  return env.npm_command !== undefined && env.npm_command !== 'exec';
}
