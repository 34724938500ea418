// A real Kubernetes control plane for the Kubernetes driver's tests: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler and kwok (fake nodes: no kubelet, no container runs; pods
// bound to a kwok node get Ready and an IP), built by scripts/kubernetes.sh, on loopback ports of their
// own, in a temporary folder removed at the end.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, KubeConfig, type V1Node, type V1Taint } from '@kubernetes/client-node';
import { freePort } from '../../src/cli/dev/ports.ts';

const run = promisify(execFile);

/** scripts/kubernetes.sh's cache folder. */
export const KUBERNETES_BINARIES = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'),
  'llmgw',
  'kubernetes-v1.34.4',
);
/** The namespace the tests give llmgw's pods. */
export const LLMGW_NAMESPACE = 'llmgw';

/**
 * Why the Kubernetes tests cannot run here (the build is missing), or false when they can. With
 * LLMGW_REQUIRE_KUBERNETES set (.ci/run sets it), a missing build is a failure, not a skip.
 */
export function kubernetesMissing(): string | false {
  if (existsSync(join(KUBERNETES_BINARIES, 'kwok-stages.yaml'))) return false;
  const why = `the Kubernetes control plane is not built in ${KUBERNETES_BINARIES}: run \`bash scripts/kubernetes.sh build\` (12-16 min, once per machine)`;
  if (process.env.LLMGW_REQUIRE_KUBERNETES) throw new Error(`${why} (LLMGW_REQUIRE_KUBERNETES is set)`);
  return `skipped: ${why}`;
}

export interface KubernetesCluster {
  /** A kubeconfig file with the cluster's admin token (system:masters). */
  kubeconfig: string;
  kube: KubeConfig;
  api: CoreV1Api;
  /** The API server's URL and its CA, for clients of other users (RBAC tests). */
  server: string;
  caFile: string;
  /** Nodes kwok keeps Ready, each with `gpus` nvidia.com/gpu, 64 cores and 512 GiB. */
  addGpuNodes(names: string[], gpus?: number, labels?: Record<string, string>): Promise<void>;
  /** Replaces a node's taints. */
  setTaints(name: string, taints: V1Taint[]): Promise<void>;
  /** Takes a node from kwok (it no longer heartbeats it) and sets its Ready condition False. */
  makeNotReady(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the control plane; about 5 s once built. */
export async function startKubernetes(): Promise<KubernetesCluster> {
  const bin = (name: string) => join(KUBERNETES_BINARIES, name);
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-kubernetes-'));
  const processes: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(processes.reverse().map(ended));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [etcdPort, peerPort, apiPort] = [await freePort(), await freePort(), await freePort()];
    const token = await certificates(dir);
    const server = `https://127.0.0.1:${apiPort}`;
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigText(server, await readFile(join(dir, 'ca.crt')), token));
    const start = (name: string, args: string[]) => {
      const log = openSync(join(dir, `${name}.log`), 'a');
      const child = spawn(bin(name), args, { stdio: ['ignore', log, log] });
      processes.push(child);
      return child;
    };
    const etcdUrl = `http://127.0.0.1:${etcdPort}`;
    const peerUrl = `http://127.0.0.1:${peerPort}`;
    start('etcd', [
      '--name=test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=${etcdUrl}`,
      `--advertise-client-urls=${etcdUrl}`,
      `--listen-peer-urls=${peerUrl}`,
      `--initial-advertise-peer-urls=${peerUrl}`,
      `--initial-cluster=test=${peerUrl}`,
      // Test data only: a crash loses nothing worth keeping.
      '--unsafe-no-fsync',
      '--log-level=warn',
    ]);
    await until(60_000, 'etcd to be healthy', async () => (await fetch(`${etcdUrl}/health`)).ok);
    start('kube-apiserver', [
      `--etcd-servers=${etcdUrl}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      `--tls-cert-file=${join(dir, 'apiserver.crt')}`,
      `--tls-private-key-file=${join(dir, 'apiserver.key')}`,
      `--client-ca-file=${join(dir, 'ca.crt')}`,
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--authorization-mode=RBAC',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'sa.pub')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      // No Service endpoints for a single loopback API server to keep.
      '--endpoint-reconciler-type=none',
    ]);
    const kube = new KubeConfig();
    kube.loadFromFile(kubeconfig);
    const api = kube.makeApiClient(CoreV1Api);
    await until(120_000, 'kube-apiserver to be ready', async () => {
      await api.listNamespace();
      return true;
    });
    // The controller manager makes each namespace's default ServiceAccount, without which pods are refused.
    start('kube-controller-manager', [
      `--kubeconfig=${kubeconfig}`,
      '--leader-elect=false',
      '--secure-port=0',
      `--service-account-private-key-file=${join(dir, 'sa.key')}`,
      `--root-ca-file=${join(dir, 'ca.crt')}`,
      '--controllers=*,-nodeipam',
    ]);
    start('kube-scheduler', [`--kubeconfig=${kubeconfig}`, '--leader-elect=false', '--secure-port=0']);
    start('kwok', [
      `--kubeconfig=${kubeconfig}`,
      `--config=${bin('kwok-stages.yaml')}`,
      '--manage-all-nodes=false',
      `--manage-nodes-with-annotation-selector=${KWOK_ANNOTATION}=fake`,
      '--node-lease-duration-seconds=40',
      '--cidr=10.244.0.0/16',
      '--node-ip=127.0.0.1',
      '--server-address=127.0.0.1:0',
    ]);
    await api.createNamespace({ body: { metadata: { name: LLMGW_NAMESPACE } } });
    await until(60_000, `the ${LLMGW_NAMESPACE} namespace's default ServiceAccount`, async () => {
      await api.readNamespacedServiceAccount({ name: 'default', namespace: LLMGW_NAMESPACE });
      return true;
    });
    return {
      kubeconfig,
      kube,
      api,
      server,
      caFile: join(dir, 'ca.crt'),
      async addGpuNodes(names, gpus = 8, labels = {}) {
        for (const name of names) await api.createNode({ body: gpuNode(name, gpus, labels) });
        await until(60_000, `nodes ${names.join(', ')} to be Ready`, async () => {
          const nodes = await api.listNode();
          return names.every((name) => isReady(nodes.items.find((node) => node.metadata?.name === name)));
        });
      },
      async setTaints(name, taints) {
        await until(10_000, `node ${name}'s taints replaced`, async () => {
          const node = await api.readNode({ name });
          await api.replaceNode({ name, body: { ...node, spec: { ...node.spec, taints } } });
          return true;
        });
      },
      async makeNotReady(name) {
        const node = await api.readNode({ name });
        delete node.metadata?.annotations?.[KWOK_ANNOTATION];
        await api.replaceNode({ name, body: node });
        const now = new Date();
        const fresh = await api.readNode({ name });
        const conditions = (fresh.status?.conditions ?? []).map((condition) =>
          condition.type === 'Ready'
            ? {
                ...condition,
                status: 'False',
                reason: 'KubeletStopped',
                lastTransitionTime: now,
                lastHeartbeatTime: now,
              }
            : condition,
        );
        await api.replaceNodeStatus({ name, body: { ...fresh, status: { ...fresh.status, conditions } } });
      },
      stop,
    };
  } catch (error) {
    const logs = await Promise.all(
      ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kwok'].map(async (name) => {
        const text = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
        return `--- ${name}\n${text.split('\n').slice(-15).join('\n')}`;
      }),
    );
    await stop();
    throw new Error(`the Kubernetes control plane did not start: ${String(error)}\n${logs.join('\n')}`);
  }
}

/** kwok manages the nodes that carry this annotation (=fake), and no other. */
const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';

function gpuNode(name: string, gpus: number, labels: Record<string, string>): V1Node {
  const room = { cpu: '64', memory: '512Gi', pods: '110', 'nvidia.com/gpu': String(gpus) };
  return {
    metadata: {
      name,
      annotations: { [KWOK_ANNOTATION]: 'fake' },
      labels: { 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux', type: 'kwok', ...labels },
    },
    status: { capacity: room, allocatable: room },
  };
}

export const isReady = (node: V1Node | undefined) =>
  node?.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ??
  false;

/**
 * A CA, the API server's certificate for 127.0.0.1, the ServiceAccount token signing key (EC P-256: RSA
 * keys take seconds each on a loaded machine), and a static token file whose one token is in
 * system:masters (cluster-admin under RBAC). Returns that token.
 */
async function certificates(dir: string): Promise<string> {
  const openssl = (...args: string[]) => run('openssl', args, { cwd: dir });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=llmgw-test-ca',
  );
  await openssl(
    'req',
    ...ec,
    '-keyout',
    'apiserver.key',
    '-out',
    'apiserver.csr',
    '-subj',
    '/CN=kube-apiserver',
  );
  writeFileSync(
    join(dir, 'san.ext'),
    'subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\n',
  );
  await openssl(
    'x509',
    '-req',
    '-in',
    'apiserver.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'apiserver.crt',
  );
  await openssl('ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sa.key');
  await openssl('ec', '-in', 'sa.key', '-pubout', '-out', 'sa.pub');
  const token = (await openssl('rand', '-hex', '32')).stdout.trim();
  writeFileSync(join(dir, 'tokens.csv'), `${token},admin,admin,system:masters\n`, { mode: 0o600 });
  return token;
}

function kubeconfigText(server: string, ca: Buffer, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster: { server, 'certificate-authority-data': ca.toString('base64') } }],
    users: [{ name: 'admin', user: { token } }],
    contexts: [{ name: 'test', context: { cluster: 'test', user: 'admin' } }],
    'current-context': 'test',
  });
}

async function until(ms: number, what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}${last ? ` (last: ${String(last)})` : ''}`);
}

/** SIGTERM, then SIGKILL after 5 s: resolves once the process is gone. */
function ended(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
