import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';

/** Makes `folder` hold links to these commands alone: a PATH on which a script finds nothing else. */
export function binFolder(folder: string, commands: string[]): string {
  mkdirSync(folder, { recursive: true });
  for (const command of commands) {
    const path = execFileSync('bash', ['-c', `type -P ${command}`], { encoding: 'utf8' }).trim();
    symlinkSync(path, `${folder}/${command}`);
  }
  return folder;
}
