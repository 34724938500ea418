// scripts/temporal-server.sh without a server: the config it writes for a Postgres URL and a block of
// ports, the sentences for bad input, and its build into the cache (with a `go` that only pretends).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  AUTHORIZING_SERVER_PORTS,
  TEMPORAL_SERVER_PORTS,
} from '../../src/cli/dev/temporal-postgres-server.ts';
import { binFolder } from '../support/bin-folder.ts';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'temporal-server.sh');
const work = mkdtempSync(join(tmpdir(), 'llmgw-temporal-server-'));
after(() => rmSync(work, { recursive: true, force: true }));

function script(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      [SCRIPT, ...args],
      { env: { PATH: process.env.PATH ?? '', HOME: work, ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stdout, stderr }),
    );
  });
}

interface Datastore {
  sql: { pluginName: string; databaseName: string; connectAddr: string; user: string; password: string };
}
interface Rpc {
  rpc: { grpcPort: number; httpPort?: number; membershipPort: number; bindOnIP: string };
}

describe('the config temporal-server.sh writes', () => {
  const dir = join(work, 'config');
  // A password with what URLs encode and YAML quotes.
  const url = 'postgres://tem%40poral:p%27a%3As%23s%20w@db.example:5433/tempo';

  it('points both stores at the URL, decoded, and the services at the block of ports', async () => {
    const result = await script(['config', '--port', '21000', '--dir', dir], { TEMPORAL_POSTGRES_URL: url });
    assert.equal(result.code, 0, result.stderr);
    const config = parse(readFileSync(join(dir, 'development.yaml'), 'utf8'));

    const stores: Record<string, Datastore> = config.persistence.datastores;
    const store = stores[config.persistence.defaultStore].sql;
    const visibility = stores[config.persistence.visibilityStore].sql;
    for (const sql of [store, visibility]) {
      assert.equal(sql.pluginName, 'postgres12');
      assert.equal(sql.connectAddr, 'db.example:5433');
      assert.equal(sql.user, 'tem@poral');
      assert.equal(sql.password, "p'a:s#s w");
    }
    assert.deepEqual([store.databaseName, visibility.databaseName], ['tempo', 'tempo_visibility']);

    const services: Record<string, Rpc> = config.services;
    assert.equal(services.frontend.rpc.grpcPort, 21000, 'clients dial the first port');
    assert.equal(config.clusterMetadata.clusterInformation.active.rpcAddress, '127.0.0.1:21000');
    assert.equal(config.publicClient.hostPort, '127.0.0.1:21000');
    const ports = Object.values(services).flatMap(({ rpc }) =>
      [rpc.grpcPort, rpc.membershipPort, rpc.httpPort ?? []].flat(),
    );
    assert.deepEqual(
      ports.sort((a, b) => a - b),
      Array.from({ length: TEMPORAL_SERVER_PORTS }, (_, index) => 21000 + index),
      'the block the callers keep free, each port used once',
    );
    for (const { rpc } of Object.values(services)) assert.equal(rpc.bindOnIP, '127.0.0.1');
  });

  it('with --authorize: the internal frontend on the three more ports, and no public client for the server to use', async () => {
    const authorizing = join(work, 'authorizing');
    const result = await script(['config', '--port', '21000', '--dir', authorizing, '--authorize'], {
      TEMPORAL_POSTGRES_URL: url,
    });
    assert.equal(result.code, 0, result.stderr);
    const config = parse(readFileSync(join(authorizing, 'development.yaml'), 'utf8'));
    assert.equal(config.publicClient, undefined, "the server's own workers call the internal frontend");
    assert.deepEqual(config.services['internal-frontend'].rpc, {
      grpcPort: 21009,
      httpPort: 21011,
      membershipPort: 21010,
      bindOnIP: '127.0.0.1',
    });
    const ports = Object.values(config.services as Record<string, Rpc>).flatMap(({ rpc }) =>
      [rpc.grpcPort, rpc.membershipPort, rpc.httpPort ?? []].flat(),
    );
    assert.deepEqual(
      ports.sort((x, y) => x - y),
      Array.from({ length: AUTHORIZING_SERVER_PORTS }, (_, index) => 21000 + index),
    );
  });

  it("adds to compose's dynamic config a namespace cache refreshed every second", () => {
    const config = parse(readFileSync(join(dir, 'development.yaml'), 'utf8'));
    assert.equal(config.dynamicConfigClient.filepath, join(dir, 'dynamicconfig.yaml'));
    const dynamic = parse(readFileSync(config.dynamicConfigClient.filepath, 'utf8'));
    assert.deepEqual(dynamic['limit.maxIDLength'], [{ value: 255, constraints: {} }]);
    assert.deepEqual(dynamic['system.enableActivityEagerExecution'], [{ value: true, constraints: {} }]);
    assert.deepEqual(dynamic['system.namespaceCacheRefreshInterval'], [{ value: '1s', constraints: {} }]);
  });

  it('is readable by its user alone: it holds the password', () => {
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    assert.equal(statSync(join(dir, 'development.yaml')).mode & 0o777, 0o600);
  });

  it('takes `temporal` when the URL names no database, and port 5432 when it names no port', async () => {
    const other = join(work, 'defaults');
    const result = await script(['config', '--port', '7233', '--dir', other], {
      TEMPORAL_POSTGRES_URL: 'postgresql://temporal@localhost',
    });
    assert.equal(result.code, 0, result.stderr);
    const store = parse(readFileSync(join(other, 'development.yaml'), 'utf8')).persistence.datastores[
      'postgres-visibility'
    ].sql;
    assert.deepEqual(
      [store.databaseName, store.connectAddr, store.password],
      ['temporal_visibility', 'localhost:5432', ''],
    );
  });
});

describe('temporal-server.sh refuses bad input in one sentence, before building anything', () => {
  const url = 'postgres://u:p@127.0.0.1:5432/temporal';
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ['no URL', ['start', '--port', '7233'], {}, /^temporal-server: TEMPORAL_POSTGRES_URL is not set: /],
    [
      'a URL with parameters',
      ['start', '--port', '7233'],
      { TEMPORAL_POSTGRES_URL: `${url}?sslmode=require` },
      /^temporal-server: TEMPORAL_POSTGRES_URL is not a URL of the form postgres:\/\/user:password@host:port\/database \(without \?parameters\)$/,
    ],
    ['no port', ['start'], { TEMPORAL_POSTGRES_URL: url }, /^temporal-server: --port P is required/],
    [
      'a port whose block ends past 65535',
      ['start', '--port', '65530'],
      { TEMPORAL_POSTGRES_URL: url },
      /^temporal-server: --port takes the first of 9 free ports \(1 to 65527\), not '65530'$/,
    ],
    [
      "a block of 12 ports past 65535 with llmgw's authorizer",
      ['start', '--port', '65525', '--authorize'],
      { TEMPORAL_POSTGRES_URL: url },
      /^temporal-server: --port with --authorize takes the first of 12 free ports \(1 to 65524\), not '65525'$/,
    ],
    [
      "llmgw's authorizer without its key",
      ['start', '--port', '7233', '--authorize'],
      { TEMPORAL_POSTGRES_URL: url },
      /^temporal-server: --authorize needs LLMGW_TEMPORAL_KEY_FILE: a readable file holding the key that signs llmgw's Temporal credentials$/,
    ],
    [
      'an unknown option',
      ['start', '--port', '7233', '--ui'],
      { TEMPORAL_POSTGRES_URL: url },
      /unknown option '--ui'/,
    ],
    [
      'an unknown command',
      ['run'],
      {},
      /^temporal-server: usage: temporal-server.sh build \[--authorize\] \| start/,
    ],
  ];
  for (const [what, args, env, sentence] of cases) {
    it(what, async () => {
      const result = await script(args, { XDG_CACHE_HOME: join(work, 'untouched'), ...env });
      assert.equal(result.code, 1);
      assert.match(result.stderr.trim(), sentence);
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
      assert.ok(!existsSync(join(work, 'untouched')), 'nothing was built');
    });
  }
});

/** What the build runs besides go: no temporal-server anywhere. */
const COMMANDS = [
  'bash',
  'chmod',
  'cp',
  'dirname',
  'env',
  'grep',
  'mkdir',
  'mktemp',
  'mv',
  'rm',
  'sed',
  'sleep',
  'tail',
];

/** A `go` that logs its calls, "builds" both commands into GOBIN and has the server module in its cache. */
const FAKE_GO = `#!/bin/sh
echo "$*" >> "$FAKE_GO_CALLS"
case "$1" in
  env) echo "$FAKE_GO_MODCACHE" ;;
  install)
    for name in server sql; do printf '#!/bin/sh\\necho %s\\n' "$name" > "$GOBIN/$name"; chmod +x "$GOBIN/$name"; done ;;
esac
`;

describe('temporal-server.sh build', () => {
  const bin = binFolder(join(work, 'bin'), COMMANDS);
  writeFileSync(join(bin, 'go'), FAKE_GO, { mode: 0o755 });
  const modcache = join(work, 'modcache');
  const versioned = join(
    modcache,
    'go.temporal.io',
    'server@v1.29.1',
    'schema',
    'postgresql',
    'v12',
    'temporal',
    'versioned',
  );
  mkdirSync(join(versioned, 'v1.0'), { recursive: true });
  writeFileSync(join(versioned, 'v1.0', 'manifest.json'), '{}', { mode: 0o444 });
  const calls = join(work, 'go-calls');
  const env = {
    PATH: bin,
    XDG_CACHE_HOME: join(work, 'cache'),
    FAKE_GO_CALLS: calls,
    FAKE_GO_MODCACHE: modcache,
  };
  const folder = join(work, 'cache', 'llmgw', 'temporal-server-v1.29.1');

  it('installs both commands under their own names, with the schema, and prints the folder', async () => {
    const result = await script(['build'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), folder);
    assert.deepEqual(readFileSync(calls, 'utf8').trim().split('\n'), [
      'install -x go.temporal.io/server/cmd/server@v1.29.1 go.temporal.io/server/cmd/tools/sql@v1.29.1',
      'env GOMODCACHE',
    ]);
    assert.ok(statSync(join(folder, 'temporal-server')).mode & 0o100);
    assert.ok(statSync(join(folder, 'temporal-sql-tool')).mode & 0o100);
    const manifest = join(
      folder,
      'schema',
      'postgresql',
      'v12',
      'temporal',
      'versioned',
      'v1.0',
      'manifest.json',
    );
    assert.ok(statSync(manifest).mode & 0o200, 'the copy of the read-only module cache can be removed');
  });

  it('builds nothing the second time', async () => {
    const result = await script(['build'], env);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout.trim(), folder);
    assert.equal(readFileSync(calls, 'utf8').trim().split('\n').length, 2, 'no further call to go');
  });

  it('says how to get Go when there is none', async () => {
    const result = await script(['build'], {
      PATH: binFolder(join(work, 'bin-no-go'), COMMANDS),
      XDG_CACHE_HOME: join(work, 'empty'),
    });
    assert.equal(result.code, 1);
    assert.equal(
      result.stderr.trim(),
      'temporal-server: building Temporal server v1.29.1 needs Go >= 1.25 (https://go.dev/doc/install); install it and rerun',
    );
  });
});
