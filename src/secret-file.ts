import { readFileSync } from 'node:fs';

/**
 * A secret read from a file (its surrounding blanks dropped): `NAME_FILE` in the environment, or
 * `--token-file`. A secret given so never enters an environment (which /proc/<pid>/environ shows to
 * the same user and root for the life of the process, whatever it deletes later) nor a command line
 * (which `ps` shows to everyone).
 */
export function readSecretFile(path: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(
      `${what}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
    );
  }
  const secret = text.trim();
  if (!secret) throw new Error(`${what}: ${path} is empty`);
  return secret;
}

/** The secret `name` holds, or the one in the file `name_FILE` names; both set is refused, as ambiguous. */
export function secretFromEnv(env: Record<string, string | undefined>, name: string): string | undefined {
  const file = env[`${name}_FILE`];
  if (!file) return env[name] || undefined;
  if (env[name]) throw new Error(`give ${name} or ${name}_FILE, not both`);
  return readSecretFile(file, `${name}_FILE`);
}
