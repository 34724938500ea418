// Consistency checks for the production compose stack: docker-compose.yml, the Dockerfile and the
// files under deploy/ that the services mount. No Docker engine is needed: the files are parsed and
// cross-checked (services, ports, addresses, mounts, start-up order, commands, environment), and
// docker-compose itself validates the file (`config -q`).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { parseClusterFile } from '../../../src/cluster/sim/cluster-file.ts';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../../src/workflows/search-attributes.ts';
import { testTool } from '../../support/test-tools.ts';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

// Environment variables llmgw reads (ARCHITECTURE.md, "Commands and configuration"), plus
// LLMGW_HOST (the API's bind address, default 127.0.0.1), which src/config.ts reads and a container
// must set to 0.0.0.0.
const DOCUMENTED_ENV = new Set([
  'LLMGW_HOST',
  'DATABASE_URL',
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'PORT',
  'LLMGW_GATEWAY_PORT',
  'LLMGW_GATEWAY_INSTANCE',
  'LLMGW_ADMIN_TOKEN',
  'LLMGW_METRICS_TOKEN',
  'LLMGW_METRICS_PORT',
  'LLMGW_SIM_CLUSTER',
  'LLMGW_SIM_START_DELAY_MS',
  'LLMGW_RESYNC_S',
  'LLMGW_SCALE_DOWN_WINDOW_S',
  'LLMGW_LOAD_STALE_S',
  'LLMGW_HOME',
  'LLMGW_TOKEN',
  'LLMGW_URL',
  'LLMGW_AGENT_HOME',
]);

// `llmgw` subcommands a long-running container may run (ARCHITECTURE.md; `dev` is for one machine).
const CLI_COMMANDS = new Set(['serve', 'worker', 'migrate', 'agent']);

type Service = Record<string, any>;

// Compose-style interpolation with a fixed environment: `${X:-d}` / `${X-d}` -> d,
// `${X:?msg}` / `${X?msg}` -> a placeholder, `${X}` / `$X` -> '', `$$` -> `$`.
function interpolate(text: string): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (whole, _name, op: string | undefined, arg: string | undefined) => {
      if (whole === '$$') return '$';
      if (op === undefined) return '';
      return op.endsWith('-') ? (arg ?? '') : 'required-value';
    },
  );
}

function interpolateDeep(value: unknown): unknown {
  if (typeof value === 'string') return interpolate(value);
  if (Array.isArray(value)) return value.map(interpolateDeep);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolateDeep(v)]));
  }
  return value;
}

function readRepoFile(path: string): string {
  return readFileSync(resolve(root, path), 'utf8');
}

// The text of every TypeScript file under src/.
function sourceText(dir = resolve(root, 'src')): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return sourceText(path);
      return entry.name.endsWith('.ts') ? readFileSync(path, 'utf8') : '';
    })
    .join('\n');
}

const rawCompose = parse(readRepoFile('docker-compose.yml'), { merge: true });
const compose = interpolateDeep(rawCompose) as {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
};
const services = compose.services;

function service(name: string): Service {
  const svc = services[name];
  assert.ok(svc, `docker-compose.yml has no service ${name}`);
  return svc;
}

function env(svc: Service): Record<string, string> {
  const raw = svc.environment ?? {};
  if (Array.isArray(raw)) {
    return Object.fromEntries(
      raw.map((entry: string) => {
        const eq = entry.indexOf('=');
        return eq < 0 ? [entry, ''] : [entry.slice(0, eq), entry.slice(eq + 1)];
      }),
    );
  }
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, v == null ? '' : String(v)]));
}

function dependsOn(svc: Service): Map<string, string> {
  const raw = svc.depends_on ?? [];
  if (Array.isArray(raw)) return new Map(raw.map((name: string) => [name, 'service_started']));
  return new Map(
    Object.entries(raw).map(([name, spec]) => [
      name,
      (spec as { condition?: string } | null)?.condition ?? 'service_started',
    ]),
  );
}

interface PortMapping {
  hostIp: string;
  published: string;
  target: number;
  protocol: string;
}

function ports(svc: Service): PortMapping[] {
  return (svc.ports ?? []).map((p: unknown): PortMapping => {
    if (typeof p === 'object' && p) {
      const long = p as { host_ip?: string; published?: string | number; target: number; protocol?: string };
      return {
        hostIp: long.host_ip ?? '0.0.0.0',
        published: String(long.published ?? ''),
        target: Number(long.target),
        protocol: long.protocol ?? 'tcp',
      };
    }
    const [spec, protocol = 'tcp'] = String(p).split('/');
    const parts = spec.split(':');
    const target = Number(parts.pop());
    const published = parts.pop() ?? '';
    return { hostIp: parts.pop() ?? '0.0.0.0', published, target, protocol };
  });
}

// Ports a service's container listens on: what it exposes plus the targets of its published ports.
function listeningPorts(svc: Service): Set<number> {
  const exposed = (svc.expose ?? []).map((p: string | number) => Number(String(p).split('/')[0]));
  return new Set<number>([...exposed, ...ports(svc).map((p) => p.target)]);
}

interface Mount {
  type: 'bind' | 'volume';
  source: string;
  target: string;
}

function mounts(svc: Service): Mount[] {
  return (svc.volumes ?? []).map((v: unknown): Mount => {
    if (typeof v === 'object' && v) {
      const long = v as { type: string; source: string; target: string };
      return { type: long.type === 'bind' ? 'bind' : 'volume', source: long.source, target: long.target };
    }
    const [source, target] = String(v).split(':');
    const isPath = source.startsWith('.') || source.startsWith('/') || source.startsWith('~');
    return { type: isPath ? 'bind' : 'volume', source, target: target ?? source };
  });
}

// The repository file bind-mounted at `target` inside `svc`.
function mountedFile(svc: Service, target: string): string {
  const mount = mounts(svc).find((m) => m.type === 'bind' && m.target === target);
  assert.ok(mount, `nothing is bind-mounted at ${target}`);
  return isAbsolute(mount.source) ? mount.source : resolve(root, mount.source);
}

// The script a one-shot job runs: `entrypoint: [sh, /path]` with /path bind-mounted from the repo.
function jobScript(name: string): string {
  const svc = service(name);
  const argv = [...[svc.entrypoint ?? []].flat(), ...[svc.command ?? []].flat()].map(String);
  const path = argv.find((a) => a.endsWith('.sh'));
  assert.ok(path, `${name} runs no .sh script (entrypoint/command: ${argv.join(' ')})`);
  return readFileSync(mountedFile(svc, path), 'utf8');
}

function hostPort(address: string, defaultPort?: number): { host: string; port: number } {
  const m = /^\[?([^\]]+?)\]?(?::(\d+))?$/.exec(address.trim());
  assert.ok(m, `cannot parse address ${address}`);
  const port = m[2] ? Number(m[2]) : defaultPort;
  assert.ok(port, `address ${address} has no port`);
  return { host: m[1], port };
}

function assertReachable(from: string, what: string, host: string, port: number): void {
  const target = services[host];
  assert.ok(target, `${from}: ${what} names host ${host}, which is not a service`);
  const listening = listeningPorts(target);
  assert.ok(
    listening.has(port),
    `${from}: ${what} uses ${host}:${port}, but ${host} listens on ${[...listening].join(', ') || 'nothing'}`,
  );
}

function builtServices(): [string, Service][] {
  return Object.entries(services).filter(([, svc]) => svc.build !== undefined);
}

interface Dockerfile {
  from: string;
  instructions: { op: string; args: string }[];
}

// The final stage of a Dockerfile: continuation lines joined, comments dropped.
function finalStage(text: string): Dockerfile {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  let stage: Dockerfile | undefined;
  for (const line of lines) {
    const [, op, args] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (op.toUpperCase() === 'FROM') stage = { from: args.split(/\s+/)[0], instructions: [] };
    else stage?.instructions.push({ op: op.toUpperCase(), args });
  }
  assert.ok(stage, 'the Dockerfile has no FROM');
  return stage;
}

function execForm(stage: Dockerfile, op: string): string[] {
  const found = stage.instructions.filter((i) => i.op === op).pop();
  assert.ok(found, `the final stage has no ${op}`);
  const parsed = JSON.parse(found.args);
  assert.ok(Array.isArray(parsed), `${op} must use the exec (JSON array) form`);
  return parsed.map(String);
}

/** Where prometheus-start.sh puts the metrics token, and the llmgw-api scrape job reads it. */
const METRICS_TOKEN_FILE = '/run/secrets/metrics-token';

/** `config -q` of a compose file in `dir`, with the two secrets it requires set: exit status and stderr. */
function composeConfig(
  compose: string,
  dir: string,
  file: string,
): { status: number | null; stderr: string } {
  const run = spawnSync(compose, ['-f', file, 'config', '-q'], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, LLMGW_ADMIN_TOKEN: 'placeholder', LLMGW_METRICS_TOKEN: 'placeholder' },
  });
  return { status: run.status, stderr: run.stderr };
}

// docker-compose is found or installed by the harness (scripts/test-tools.sh); without it these fail.
describe('docker-compose config', () => {
  it('accepts docker-compose.yml', async () => {
    const { status, stderr } = composeConfig(await testTool('compose'), root, 'docker-compose.yml');
    assert.equal(status, 0, stderr);
  });

  it('refuses a file it could not run, so the check above can fail', async () => {
    const compose = await testTool('compose');
    const dir = mkdtempSync(join(tmpdir(), 'llmgw-compose-'));
    try {
      writeFileSync(join(dir, 'docker-compose.yml'), 'services:\n  api:\n    imag: postgres:16\n');
      const { status, stderr } = composeConfig(compose, dir, 'docker-compose.yml');
      assert.notEqual(status, 0);
      assert.match(stderr, /imag/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('docker-compose.yml', () => {
  it('defines the services of the production stack', () => {
    for (const name of [
      'postgres',
      'temporal-schema',
      'temporal',
      'temporal-setup',
      'temporal-ui',
      'llmgw-api',
      'llmgw-worker',
      'prometheus',
    ]) {
      service(name);
    }
    assert.match(service('temporal').image, /^temporalio\/server:/);
    assert.match(service('temporal-schema').image, /^temporalio\/admin-tools:/);
    assert.match(service('temporal-setup').image, /^temporalio\/admin-tools:/);
    assert.match(service('temporal-ui').image, /^temporalio\/ui:/);
    assert.match(service('postgres').image, /^postgres:16/);
    assert.match(service('prometheus').image, /^prom\/prometheus:/);
  });

  it('names only existing services in depends_on', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const dep of dependsOn(svc).keys()) {
        assert.ok(services[dep], `${name} depends on ${dep}, which is not a service`);
        assert.notEqual(dep, name, `${name} depends on itself`);
      }
    }
  });

  it('gives a healthcheck to every service that others wait on as healthy', () => {
    for (const [name, svc] of Object.entries(services)) {
      for (const [dep, condition] of dependsOn(svc)) {
        if (condition !== 'service_healthy') continue;
        const test = services[dep]?.healthcheck?.test;
        assert.ok(
          test && !(Array.isArray(test) && test[0] === 'NONE'),
          `${name} waits for ${dep} to be healthy, but ${dep} has no healthcheck`,
        );
      }
    }
  });

  it('lets one-shot jobs finish (no restart policy that restarts a successful exit)', () => {
    for (const svc of Object.values(services)) {
      for (const [dep, condition] of dependsOn(svc)) {
        if (condition !== 'service_completed_successfully') continue;
        const restart = String(services[dep]?.restart ?? 'no');
        assert.ok(
          restart === 'no' || restart.startsWith('on-failure'),
          `${dep} is awaited as a one-shot job but has restart: ${restart}`,
        );
      }
    }
  });

  it('runs the schema job to completion after Postgres is healthy and before the Temporal server', () => {
    assert.equal(dependsOn(service('temporal')).get('temporal-schema'), 'service_completed_successfully');
    assert.equal(dependsOn(service('temporal-schema')).get('postgres'), 'service_healthy');
    assert.doesNotMatch(service('temporal').image, /auto-setup/, 'temporalio/auto-setup is deprecated');
  });

  it('sets up, in the schema job, both databases the Temporal server is configured to use', () => {
    const script = jobScript('temporal-schema');
    for (const step of ['create-database', 'setup-schema', 'update-schema']) {
      assert.match(
        script,
        new RegExp(`temporal-sql-tool[^\\n]*\\s${step}(\\s|$)`, 'm'),
        `the schema job never runs ${step}`,
      );
    }
    assert.match(script, /postgresql\/v12/, 'the schema job does not use the postgresql v12 schema');
    const job = env(service('temporal-schema'));
    const server = env(service('temporal'));
    assert.equal(job.SQL_PLUGIN, server.DB, 'schema job and server use different SQL plugins');
    assert.equal(job.SQL_USER, server.POSTGRES_USER, 'schema job and server use different roles');
    assert.equal(job.TEMPORAL_DB, server.DBNAME ?? 'temporal');
    assert.equal(job.TEMPORAL_VISIBILITY_DB, server.VISIBILITY_DBNAME ?? 'temporal_visibility');
    assert.notEqual(job.TEMPORAL_DB, job.TEMPORAL_VISIBILITY_DB);
  });

  it('keeps the Temporal server and the admin tools on the same server version', () => {
    const version = (image: string) => /:(\d+\.\d+\.\d+)/.exec(image)?.[1];
    const server = version(service('temporal').image);
    assert.ok(server, 'temporalio/server has no x.y.z tag');
    assert.match(server, /^1\.29\./);
    assert.equal(version(service('temporal-schema').image), server);
    assert.equal(version(service('temporal-setup').image), server);
  });

  it('creates the namespace and search attributes after the server is healthy and before llmgw starts', () => {
    assert.equal(dependsOn(service('temporal-setup')).get('temporal'), 'service_healthy');
    for (const name of ['llmgw-api', 'llmgw-worker']) {
      assert.equal(
        dependsOn(service(name)).get('temporal-setup'),
        'service_completed_successfully',
        `${name} must start after temporal-setup completed`,
      );
      assert.equal(
        env(service(name)).TEMPORAL_NAMESPACE,
        env(service('temporal-setup')).TEMPORAL_NAMESPACE,
        `${name} uses another namespace than the one temporal-setup creates`,
      );
    }
    const script = jobScript('temporal-setup');
    assert.match(script, /temporal operator namespace create/);
    assert.match(script, /temporal operator search-attribute create/);
    // The attributes the workflow code upserts (src/workflows/search-attributes.ts), with their types.
    assert.ok(
      SEARCH_ATTRIBUTE_FLAGS.length >= 4,
      'expected LlmgwModel, LlmgwOwner, LlmgwReplicas, LlmgwStatus',
    );
    for (const flag of SEARCH_ATTRIBUTE_FLAGS) {
      const [name, type] = flag.split('=');
      assert.match(script, new RegExp(`--name ${name} --type ${type}\\b`), `search attribute ${flag}`);
    }
    const registered = script.match(/--name \w+ --type \w+/g) ?? [];
    assert.equal(registered.length, SEARCH_ATTRIBUTE_FLAGS.length, `registers ${registered.join(', ')}`);
    // ... and waits until the frontend lists every one of them.
    const awaited = /for name in ([\w ]+); do/.exec(script)?.[1].split(' ') ?? [];
    assert.deepEqual(awaited.sort(), SEARCH_ATTRIBUTE_FLAGS.map((flag) => flag.split('=')[0]).sort());
  });

  it('points every database and Temporal address at a service and a port it listens on', () => {
    const checked = new Set<string>();
    for (const [name, svc] of Object.entries(services)) {
      const e = env(svc);
      if (e.DATABASE_URL) {
        const url = new URL(e.DATABASE_URL);
        assert.match(url.protocol, /^postgres(ql)?:$/, `${name}: DATABASE_URL is not a Postgres URL`);
        assert.ok(url.pathname.length > 1, `${name}: DATABASE_URL names no database`);
        assertReachable(name, 'DATABASE_URL', url.hostname, Number(url.port || 5432));
        checked.add(name);
      }
      if (e.TEMPORAL_ADDRESS) {
        const { host, port } = hostPort(e.TEMPORAL_ADDRESS, 7233);
        assertReachable(name, 'TEMPORAL_ADDRESS', host, port);
        checked.add(name);
      }
      for (const [seeds, portVar] of [
        ['POSTGRES_SEEDS', 'DB_PORT'],
        ['VISIBILITY_POSTGRES_SEEDS', 'VISIBILITY_DB_PORT'],
      ]) {
        for (const seed of (e[seeds] ?? '').split(',').filter(Boolean)) {
          assertReachable(name, seeds, seed.trim(), Number(e[portVar] || e.DB_PORT || 5432));
          checked.add(name);
        }
      }
      if (e.SQL_HOST) {
        // temporal-sql-tool's default port is MySQL's.
        assertReachable(name, 'SQL_HOST', e.SQL_HOST, Number(e.SQL_PORT || 3306));
        checked.add(name);
      }
    }
    for (const name of [
      'llmgw-api',
      'llmgw-worker',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
    ]) {
      assert.ok(checked.has(name), `${name} declares no address to check`);
    }
  });

  it('matches the ports services are configured to listen on with what compose exposes', () => {
    const expectListening = (name: string, port: string | undefined, what: string) => {
      assert.ok(port, `${name} does not set ${what}`);
      assert.ok(
        listeningPorts(service(name)).has(hostPort(port.includes(':') ? port : `x:${port}`).port),
        `${name}: ${what}=${port} is not among its exposed ports`,
      );
    };
    expectListening('llmgw-api', env(service('llmgw-api')).PORT, 'PORT');
    expectListening('llmgw-worker', env(service('llmgw-worker')).LLMGW_METRICS_PORT, 'LLMGW_METRICS_PORT');
    expectListening('temporal', env(service('temporal')).FRONTEND_GRPC_PORT ?? '7233', 'FRONTEND_GRPC_PORT');
    expectListening('temporal', env(service('temporal')).PROMETHEUS_ENDPOINT, 'PROMETHEUS_ENDPOINT');
    expectListening(
      'temporal-ui',
      env(service('temporal-ui')).TEMPORAL_UI_PORT ?? '8080',
      'TEMPORAL_UI_PORT',
    );
    assert.equal(
      env(service('temporal')).BIND_ON_IP,
      '0.0.0.0',
      'the Temporal frontend would bind to loopback',
    );
  });

  it('publishes the API on 8080 and the Temporal UI on 8233', () => {
    const published = (name: string) => ports(service(name)).map((p) => `${p.published}:${p.target}`);
    assert.ok(published('llmgw-api').includes('8080:8080'), `llmgw-api publishes ${published('llmgw-api')}`);
    assert.ok(
      published('temporal-ui').includes('8233:8080'),
      `temporal-ui publishes ${published('temporal-ui')}`,
    );
  });

  it('publishes only the API beyond this host: the Temporal UI, Temporal and Prometheus on 127.0.0.1', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (name === 'llmgw-api') continue;
      for (const p of ports(svc)) {
        if (p.published)
          assert.equal(p.hostIp, '127.0.0.1', `${name} publishes ${p.published} on ${p.hostIp}`);
      }
    }
    for (const name of ['temporal-ui', 'prometheus', 'temporal']) {
      assert.ok(ports(service(name)).length > 0, `${name} is not published at all`);
    }
  });

  it('turns off the write actions of the Temporal UI, which has no login', () => {
    assert.equal(env(service('temporal-ui')).TEMPORAL_DISABLE_WRITE_ACTIONS, 'true');
  });

  it('gives Prometheus the metrics token that llmgw-api stores, from one variable, on a tmpfs', () => {
    const raw = (rawCompose as { services: Record<string, Service> }).services;
    for (const name of ['llmgw-api', 'prometheus']) {
      const value = String(raw[name].environment.LLMGW_METRICS_TOKEN);
      assert.match(value, /^\$\{LLMGW_METRICS_TOKEN:\?/, `${name} does not require LLMGW_METRICS_TOKEN`);
    }
    const script = jobScript('prometheus');
    assert.match(script, new RegExp(`"\\$LLMGW_METRICS_TOKEN" > ${METRICS_TOKEN_FILE}$`, 'm'));
    assert.match(
      script,
      /^unset LLMGW_METRICS_TOKEN$/m,
      'Prometheus would keep the token in its environment',
    );
    assert.match(script, /^exec \/bin\/prometheus "\$@"$/m);
    const tmpfs = [service('prometheus').tmpfs ?? []].flat().map(String);
    assert.ok(tmpfs.includes(dirname(METRICS_TOKEN_FILE)), `the token file is not on a tmpfs (${tmpfs})`);
    // The entrypoint replaces the image's, so the command must name the mounted configuration.
    const command = [service('prometheus').command ?? []].flat().map(String);
    assert.ok(command.includes('--config.file=/etc/prometheus/prometheus.yml'), `command: ${command}`);
    mountedFile(service('prometheus'), '/etc/prometheus/prometheus.yml');
  });

  it("checks Temporal's health with what every server image has, not the temporal CLI (gone from 1.30)", () => {
    const test = [service('temporal').healthcheck?.test ?? []].flat().map(String);
    assert.equal(test[0], 'CMD');
    // busybox's applets (the images are Alpine); temporal and tctl are not in the 1.30 image.
    assert.ok(['nc', 'wget'].includes(test[1]), `the healthcheck runs ${test[1]}`);
    assert.ok(test.includes(env(service('temporal')).FRONTEND_GRPC_PORT), `it does not probe the frontend`);
  });

  it('publishes every host port at most once', () => {
    const seen = new Map<string, string>();
    for (const [name, svc] of Object.entries(services)) {
      for (const p of ports(svc)) {
        if (!p.published) continue;
        const key = `${p.published}/${p.protocol}`;
        assert.ok(!seen.has(key), `host port ${key} is published by both ${seen.get(key)} and ${name}`);
        seen.set(key, name);
      }
    }
    assert.ok(seen.size >= 3, 'expected published ports for the API, the Temporal UI and Prometheus');
  });

  it('bind-mounts only files and folders that exist in the repository', () => {
    let count = 0;
    for (const [name, svc] of Object.entries(services)) {
      for (const m of mounts(svc)) {
        if (m.type !== 'bind') continue;
        assert.ok(m.source.startsWith('./'), `${name} mounts ${m.source} from outside the repository`);
        assert.ok(existsSync(resolve(root, m.source)), `${name} mounts ${m.source}, which does not exist`);
        count++;
      }
    }
    assert.ok(count > 0, 'no bind mounts found');
  });

  it('declares every named volume it uses', () => {
    const declared = new Set(Object.keys(compose.volumes ?? {}));
    for (const [name, svc] of Object.entries(services)) {
      for (const m of mounts(svc)) {
        if (m.type === 'volume')
          assert.ok(declared.has(m.source), `${name} uses undeclared volume ${m.source}`);
      }
    }
    assert.ok(
      mounts(service('postgres')).some((m) => m.type === 'volume' && m.target === '/var/lib/postgresql/data'),
      'Postgres data is not on a volume',
    );
  });

  it('pins every image to a version', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (svc.build !== undefined) continue;
      const image = String(svc.image ?? '');
      const tag = /:([^/@]+)(@.*)?$/.exec(image)?.[1];
      assert.ok(tag && tag !== 'latest' && /\d/.test(tag), `${name} uses an unpinned image: ${image}`);
    }
  });

  it('checks Postgres health over TCP with pg_isready', () => {
    const test = [service('postgres').healthcheck?.test ?? []].flat().join(' ');
    assert.match(test, /pg_isready/);
    assert.match(test, /-h\s+(127\.0\.0\.1|localhost)/);
  });

  it('makes llmgw listen on all interfaces inside its containers', () => {
    const image = finalStage(readRepoFile('Dockerfile'));
    const imageEnv = image.instructions
      .filter((i) => i.op === 'ENV')
      .flatMap((i) => [...i.args.matchAll(/([A-Z_][A-Z0-9_]*)=("[^"]*"|\S+)/g)])
      .reduce<Record<string, string>>((acc, m) => {
        acc[m[1]] = m[2].replace(/^"|"$/g, '');
        return acc;
      }, {});
    for (const [name, svc] of builtServices()) {
      const host = env(svc).LLMGW_HOST ?? imageEnv.LLMGW_HOST;
      assert.ok(host === '0.0.0.0' || host === '::', `${name} binds to ${host ?? '127.0.0.1 (the default)'}`);
    }
  });

  it('copies the patches of dependencies before npm ci applies them', () => {
    // Without them patch-package finds nothing and says so, and the image runs the unpatched driver.
    assert.match(readRepoFile('Dockerfile'), /COPY patches \.\/patches\n[\s\S]*RUN npm ci/);
  });

  it('probes the API at /readyz on its own port', () => {
    const test = [service('llmgw-api').healthcheck?.test ?? []].flat().join(' ');
    const m = /https?:\/\/(?:127\.0\.0\.1|localhost):(\d+)\/readyz/.exec(test);
    assert.ok(m, `llmgw-api healthcheck does not probe /readyz: ${test}`);
    assert.equal(m[1], env(service('llmgw-api')).PORT);
  });

  it('uses only documented environment variables in llmgw services', () => {
    const built = builtServices();
    assert.ok(built.length >= 2, 'expected llmgw-api and llmgw-worker to be built from the Dockerfile');
    const src = sourceText();
    for (const [name, svc] of built) {
      for (const key of Object.keys(env(svc))) {
        assert.ok(DOCUMENTED_ENV.has(key), `${name} sets ${key}, which llmgw does not document`);
        assert.ok(
          src.includes(`env.${key}`) || src.includes(`'${key}'`),
          `${name} sets ${key}, which nothing under src/ reads`,
        );
      }
      // An agent reaches the control plane through the API and Temporal only: no database credentials.
      if (svc.command?.[0] === 'agent') {
        assert.equal(env(svc).DATABASE_URL, undefined, `${name} is an agent with DATABASE_URL`);
        assert.ok(env(svc).LLMGW_URL, `${name} is an agent without LLMGW_URL`);
      } else
        assert.ok(env(svc).DATABASE_URL, `${name} has no DATABASE_URL (it would start an embedded Postgres)`);
      assert.ok(env(svc).TEMPORAL_ADDRESS, `${name} has no TEMPORAL_ADDRESS (it would start a dev server)`);
    }
    assert.ok(env(service('llmgw-api')).LLMGW_ADMIN_TOKEN, 'llmgw-api has no LLMGW_ADMIN_TOKEN');
  });

  it('runs llmgw services from the Dockerfile with documented commands', () => {
    for (const [name, svc] of builtServices()) {
      const context = typeof svc.build === 'string' ? svc.build : (svc.build.context ?? '.');
      const dockerfile =
        typeof svc.build === 'string' ? 'Dockerfile' : (svc.build.dockerfile ?? 'Dockerfile');
      assert.equal(
        resolve(root, context, dockerfile),
        resolve(root, 'Dockerfile'),
        `${name} builds another file`,
      );
      const command = [svc.command ?? []].flat().map(String);
      assert.ok(CLI_COMMANDS.has(command[0]), `${name} runs "${command.join(' ')}", not an llmgw command`);
    }
    assert.deepEqual([service('llmgw-api').command].flat(), ['serve']);
    assert.deepEqual([service('llmgw-worker').command].flat(), ['worker']);
  });

  it("mounts a valid simulated cluster file at the worker's LLMGW_SIM_CLUSTER", () => {
    const worker = service('llmgw-worker');
    const path = env(worker).LLMGW_SIM_CLUSTER;
    assert.ok(path, 'llmgw-worker has no LLMGW_SIM_CLUSTER');
    assert.ok(isAbsolute(path), `LLMGW_SIM_CLUSTER=${path} depends on the working directory`);
    const file = mountedFile(worker, path);
    // llmgw's own parser (count: N expands name to name-1 .. name-N).
    const nodes = parseClusterFile(readFileSync(file, 'utf8'), file);
    assert.ok(nodes.length > 0, 'the cluster file has no nodes');
    const names = nodes.map((n) => n.name);
    assert.equal(new Set(names).size, names.length, `node names repeat: ${names.join(', ')}`);
    assert.ok(
      nodes.some((n) => (n.capacity.gpus ?? 0) > 0 && n.gpu_model),
      'the simulated cluster has no GPU node with a gpu_model',
    );
  });

  it('has valid shell scripts wherever it mounts one', () => {
    let count = 0;
    for (const [name, svc] of Object.entries(services)) {
      for (const m of mounts(svc)) {
        if (m.type !== 'bind' || !m.source.endsWith('.sh')) continue;
        try {
          execFileSync('sh', ['-n', resolve(root, m.source)], { stdio: 'pipe' });
        } catch (err) {
          assert.fail(`${name}: ${m.source} is not valid sh: ${(err as { stderr?: Buffer }).stderr}`);
        }
        count++;
      }
    }
    assert.ok(count >= 3, 'expected the Postgres init script and both Temporal job scripts');
  });
});

describe('deploy/compose/prometheus.yml', () => {
  const prometheus = service('prometheus');
  const config = parse(readFileSync(mountedFile(prometheus, '/etc/prometheus/prometheus.yml'), 'utf8')) as {
    rule_files?: string[];
    scrape_configs?: {
      job_name: string;
      authorization?: { type?: string; credentials_file?: string };
      static_configs?: { targets: string[] }[];
      dns_sd_configs?: { names: string[]; type?: string; port?: number }[];
    }[];
  };

  it('scrapes services on ports they listen on', () => {
    const scraped = new Set<string>();
    for (const job of config.scrape_configs ?? []) {
      for (const sc of job.static_configs ?? []) {
        for (const target of sc.targets) {
          const { host, port } = hostPort(target);
          assertReachable(`scrape job ${job.job_name}`, 'target', host, port);
          scraped.add(`${host}:${port}`);
        }
      }
      for (const sd of job.dns_sd_configs ?? []) {
        assert.equal(sd.type ?? 'SRV', 'A', `scrape job ${job.job_name}: only A lookups of service names`);
        for (const host of sd.names) {
          assertReachable(`scrape job ${job.job_name}`, 'dns_sd name', host, Number(sd.port));
          scraped.add(`${host}:${sd.port}`);
        }
      }
    }
    const api = service('llmgw-api');
    const worker = service('llmgw-worker');
    assert.ok(scraped.has(`llmgw-api:${env(api).PORT}`), 'llmgw-api is not scraped on PORT');
    assert.ok(
      scraped.has(`llmgw-worker:${env(worker).LLMGW_METRICS_PORT}`),
      'llmgw-worker metrics not scraped',
    );
  });

  it("scrapes the API's /metrics with the metrics token's secret as a bearer token", () => {
    const api = (config.scrape_configs ?? []).find((job) =>
      job.static_configs?.some((sc) => sc.targets.some((t) => hostPort(t).host === 'llmgw-api')),
    );
    assert.ok(api, 'no job scrapes llmgw-api');
    assert.equal(api.authorization?.type ?? 'Bearer', 'Bearer');
    assert.equal(api.authorization?.credentials_file, METRICS_TOKEN_FILE);
  });

  it('loads alert rules from files mounted into the Prometheus container', () => {
    const rules = config.rule_files ?? [];
    assert.ok(rules.includes('/etc/prometheus/rules/alerts.yml'), 'alerts.yml is not loaded');
    for (const file of rules) {
      const source = mountedFile(prometheus, file);
      const rulesDoc = parse(readFileSync(source, 'utf8')) as { groups?: unknown } | null;
      assert.ok(Array.isArray(rulesDoc?.groups), `${file} has no groups list`);
    }
  });
});

describe('Dockerfile', () => {
  const stage = finalStage(readRepoFile('Dockerfile'));

  it('runs src/cli/main.ts through tsx on Node 20', () => {
    assert.equal(stage.from, 'node:20-bookworm-slim');
    assert.deepEqual(execForm(stage, 'ENTRYPOINT'), ['node', '--import', 'tsx', 'src/cli/main.ts']);
    assert.deepEqual(execForm(stage, 'CMD'), ['serve']);
    const copies = stage.instructions.filter((i) => i.op === 'COPY').map((i) => i.args);
    assert.ok(
      copies.some((c) => /(^|\s)\.?\/?src\/?\s/.test(c)),
      'the final stage does not copy src/',
    );
    for (const file of ['package.json', 'tsconfig.json']) {
      assert.ok(
        copies.some((c) => c.split(/\s+/).includes(file)),
        `the final stage does not copy ${file}`,
      );
    }
    assert.ok(
      copies.some((c) => c.includes('node_modules')),
      'the final stage has no node_modules',
    );
  });

  it('installs production dependencies with npm ci --omit=dev', () => {
    const text = readRepoFile('Dockerfile');
    assert.match(text, /npm ci\b[^\n]*--omit=dev/);
    const pkg = JSON.parse(readRepoFile('package.json'));
    assert.ok(pkg.dependencies?.tsx, 'tsx must be a production dependency, the image runs through it');
  });

  it('runs as a non-root user and exposes the API port', () => {
    const user = stage.instructions.filter((i) => i.op === 'USER').pop()?.args;
    assert.ok(user, 'the final stage sets no USER');
    assert.ok(!/^(root|0)(:|$)/.test(user), `the image runs as ${user}`);
    const exposed = stage.instructions.filter((i) => i.op === 'EXPOSE').flatMap((i) => i.args.split(/\s+/));
    assert.ok(exposed.includes('8080'), 'the image does not expose 8080');
  });
});

describe('.dockerignore', () => {
  const patterns = readRepoFile('.dockerignore')
    .split(/\r?\n/)
    .map((l) => l.trim().replace(/^\/+|\/+$/g, ''))
    .filter((l) => l && !l.startsWith('#'));

  it('keeps local state, tests and benchmarks out of the build context', () => {
    for (const required of ['node_modules', '.llmgw', '.git', 'test', 'bench']) {
      assert.ok(patterns.includes(required), `.dockerignore does not exclude ${required}`);
    }
  });

  it('keeps what the image copies in the build context', () => {
    for (const needed of ['src', 'package.json', 'package-lock.json', 'tsconfig.json']) {
      const excluded = patterns.some((p) => !p.startsWith('!') && (p === needed || p === '*' || p === '**'));
      assert.ok(!excluded, `.dockerignore excludes ${needed}, which the Dockerfile copies`);
    }
  });
});
