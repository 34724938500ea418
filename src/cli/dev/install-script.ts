import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { childEnvironment } from '../../child-process.ts';

/** A script of the repository's scripts/ folder. */
export const scriptPath = (name: string) =>
  join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', name);

/**
 * What the install scripts need beyond the basics: where a CLI or its cache is, what Go and curl need to
 * install one, and the period of their progress lines (scripts/progress.sh).
 */
export const INSTALLER_VARIABLES =
  /^(TEMPORAL_CLI|XDG_CACHE_HOME|LLMGW_PROGRESS_EVERY_S|GO(PATH|ROOT|BIN|PROXY|FLAGS|CACHE|MODCACHE|PRIVATE|NOPROXY|NOSUMDB|SUMDB|INSECURE|TOOLCHAIN|ENV)|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_(FILE|DIR))$/;

/**
 * Runs an install script of scripts/ and returns what it printed (a path). What it says on stderr (a
 * build's progress, every 10 s) goes to `log` as it comes; when it fails, its last line, without the
 * script's own prefix (`temporal-cli: `), is the error.
 */
export async function runInstallScript(
  name: string,
  args: string[],
  log: (line: string) => void,
): Promise<string> {
  const script = spawn('bash', [scriptPath(name), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment({ passes: INSTALLER_VARIABLES }),
  });
  let printed = '';
  script.stdout.on('data', (chunk) => (printed += chunk));
  let lastLine = '';
  createInterface({ input: script.stderr }).on('line', (line) => {
    lastLine = line;
    log(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    script.once('error', reject);
    script.once('close', resolve);
  });
  const prefix = `${name.replace(/\.sh$/, '')}: `;
  if (code !== 0) {
    throw new Error(
      (lastLine.startsWith(prefix) ? lastLine.slice(prefix.length) : lastLine) ||
        `scripts/${name} exited with ${code}`,
    );
  }
  return printed.trim();
}
