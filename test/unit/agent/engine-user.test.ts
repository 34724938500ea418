// Whom an agent's engines run as (src/agent/engine-user.ts): as root, an unprivileged user named by
// --engine-user, or root only when --engines-as-root says so (with a warning); never a silent root.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseEngineUser } from '../../../src/agent/engine-user.ts';

const PASSWD = [
  'root:x:0:0:root:/root:/bin/bash',
  'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
  'llmgw-engine:x:998:998::/var/lib/llmgw-engine:/usr/sbin/nologin',
  'wheel-user:x:1001:0::/home/w:/bin/sh',
].join('\n');

describe('the user engines run as', () => {
  const choose = (user: string | undefined, asRoot: boolean, uid: number) =>
    chooseEngineUser({ user, asRoot, uid }, () => PASSWD);

  it('as root: the user named, by name or uid', () => {
    assert.deepEqual(choose('llmgw-engine', false, 0), {
      user: { name: 'llmgw-engine', uid: 998, gid: 998, home: '/var/lib/llmgw-engine' },
    });
    assert.deepEqual(choose('65534', false, 0).user?.name, 'nobody');
  });

  it('as root with --engines-as-root: no switch, and a warning that says what it costs', () => {
    const chosen = choose(undefined, true, 0);
    assert.equal(chosen.user, undefined);
    assert.match(
      chosen.warning ?? '',
      /^engines run as root \(--engines-as-root\): any engine can read this agent's token/,
    );
  });

  it('not root: the agent’s own user, no warning', () => {
    assert.deepEqual(choose(undefined, false, 998), {});
    assert.deepEqual(choose('llmgw-engine', false, 998), {});
  });

  const REFUSED: [string | undefined, boolean, number, RegExp][] = [
    [
      undefined,
      false,
      0,
      /^an agent running as root runs its engines as an unprivileged user: give --engine-user USER/,
    ],
    ['root', false, 0, /^--engine-user root is root; --engines-as-root says that on purpose$/],
    ['wheel-user', false, 0, /^--engine-user wheel-user is root;/],
    ['ghost', false, 0, /^--engine-user ghost is no user of this machine \(\/etc\/passwd\)$/],
    ['nobody', true, 0, /^give --engine-user or --engines-as-root, not both$/],
    [undefined, true, 998, /^--engines-as-root needs an agent running as root$/],
    ['nobody', false, 998, /^only an agent running as root can run engines as another user \(nobody\)$/],
  ];
  for (const [user, asRoot, uid, sentence] of REFUSED) {
    it(`refuses ${user ?? '(no user)'}${asRoot ? ' with --engines-as-root' : ''} as uid ${uid}`, () => {
      assert.throws(
        () => choose(user, asRoot, uid),
        (error: Error) => sentence.test(error.message),
      );
    });
  }
});
