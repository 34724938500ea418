import { readFileSync } from 'node:fs';

/** The unprivileged user an agent started as root runs its engines as (--engine-user). */
export interface EngineUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export interface EngineUserChoice {
  /** --engine-user: a user name or a numeric uid of /etc/passwd. */
  user?: string;
  /** --engines-as-root: the agent is root and its engines run as root too. */
  asRoot: boolean;
  /** The agent's own uid (process.getuid()). */
  uid: number;
}

/**
 * Whom the engines run as: the user given, when the agent is root; the agent's own user otherwise
 * (undefined: no switch); root only when asked for by name, with the warning the agent logs. Throws
 * one sentence for a choice it cannot honour.
 */
export function chooseEngineUser(
  choice: EngineUserChoice,
  passwd: () => string = () => readFileSync('/etc/passwd', 'utf8'),
): { user?: EngineUser; warning?: string } {
  if (choice.user !== undefined && choice.asRoot)
    throw new Error('give --engine-user or --engines-as-root, not both');
  if (choice.uid !== 0) {
    if (choice.asRoot) throw new Error('--engines-as-root needs an agent running as root');
    if (choice.user !== undefined) {
      const user = lookUp(choice.user, passwd());
      if (user.uid !== choice.uid)
        throw new Error(`only an agent running as root can run engines as another user (${choice.user})`);
    }
    return {};
  }
  if (choice.asRoot) {
    return {
      warning:
        "engines run as root (--engines-as-root): any engine can read this agent's token (/proc) and take the " +
        'machine; give --engine-user USER to run them unprivileged',
    };
  }
  if (choice.user === undefined) {
    throw new Error(
      'an agent running as root runs its engines as an unprivileged user: give --engine-user USER (e.g. nobody), ' +
        'or --engines-as-root to run them as root',
    );
  }
  const user = lookUp(choice.user, passwd());
  if (user.uid === 0 || user.gid === 0)
    throw new Error(`--engine-user ${choice.user} is root; --engines-as-root says that on purpose`);
  return { user };
}

/** A user of /etc/passwd by name or uid. */
function lookUp(nameOrUid: string, passwd: string): EngineUser {
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid, , home] = line.split(':');
    if (name === nameOrUid || uid === nameOrUid)
      return { name, uid: Number(uid), gid: Number(gid), home: home || '/' };
  }
  throw new Error(`--engine-user ${nameOrUid} is no user of this machine (/etc/passwd)`);
}
