import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { complete } from '../../../src/policy/resources.ts';
import {
  dotProduct,
  firstFit,
  llmgwBestFit,
  parseNodes,
  parsePods,
  replayPlacement,
} from '../../../src/simulate/placement-replay.ts';

const NODES = `sn,cpu_milli,memory_mib,gpu,model
big,96000,786432,8,V100
small,32000,131072,2,T4
`;
// Out of creation order on purpose; p-frac asks for 0.3 of a GPU.
const PODS = `name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time
p-late,8000,16384,2,1000,,LS,Running,50,0,50
p-frac,4000,8192,1,300,,LS,Running,10,0,10
p-cpu,16000,32768,0,0,,BE,Running,20,0,20
`;

describe('placement replay on the Alibaba format', () => {
  const nodes = parseNodes(NODES);
  const pods = parsePods(PODS);

  it('reads pods in creation order and rounds a fractional GPU up to a whole one', () => {
    assert.deepEqual(
      pods.map((p) => [p.name, p.resources.gpus, p.gpuDemand]),
      [
        ['p-frac', 1, 0.3],
        ['p-cpu', 0, 0],
        ['p-late', 2, 2],
      ],
    );
    assert.deepEqual(nodes[1].capacity, { gpus: 2, cores: 32, memory_gib: 128 });
  });

  const first = (placer: typeof firstFit) =>
    placer({ nodes, free: new Map(nodes.map((n) => [n.name, complete(n.capacity)])), replicas: [] }, pods[0]);

  it('first fit takes the first node, best fit the one left with fewest GPUs, dot product the best aligned', () => {
    assert.equal(first(firstFit), 'big');
    assert.equal(first(llmgwBestFit), 'small');
    // 1 GPU of 8 on big scores 1/8 * 1 + ...; of 2 on small 1/2 * 1 + ...: small aligns better.
    assert.equal(first(dotProduct), 'small');
  });

  it('counts GPUs unallocated, refused and rounded up as the pods arrive', () => {
    const run = replayPlacement('best', llmgwBestFit, nodes, pods, 1);
    assert.deepEqual(
      run.points.map((p) => p.unallocated),
      [9 / 10, 9 / 10, 7 / 10],
    );
    assert.deepEqual(
      run.points.map((p) => p.arrived),
      [0.3 / 10, 0.3 / 10, 2.3 / 10],
    );
    // Serving no request: what is unallocated and the 0.7 GPU that rounding up p-frac holds unasked.
    assert.deepEqual(
      run.points.map((p) => Math.round(p.idle * 1000) / 1000),
      [0.97, 0.97, 0.77],
    );
    assert.equal(run.refused, 0);
    assert.ok(Math.abs(run.roundedUpGpus - 0.7) < 1e-9);
  });

  it('refuses a pod no node has room for', () => {
    const run = replayPlacement(
      'first',
      firstFit,
      nodes,
      parsePods(PODS.replace('p-late,8000,16384,2', 'p-late,8000,16384,9')),
      1,
    );
    assert.equal(run.refused, 1);
    assert.equal(run.refusedGpus, 9);
  });

  it('reads the files as CSV: quoted fields with commas, CRLF lines, blank lines', () => {
    const quoted = parseNodes(
      'sn,cpu_milli,memory_mib,gpu,model\r\n"rack 1, node a",8000,16384,1,"A100"\r\n\r\n',
    );
    assert.deepEqual(
      quoted.map((n) => [n.name, n.capacity.gpus, n.gpu_model]),
      [['rack 1, node a', 1, 'A100']],
    );
  });
});
