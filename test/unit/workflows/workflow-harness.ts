// What the workflow tests share: the worker's own lines kept quiet (its errors still show), the
// workflows bundled once, and Temporal's time-skipping test server (found or installed by
// scripts/test-tools.sh).
import { fileURLToPath } from 'node:url';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import {
  bundleWorkflowCode,
  DefaultLogger,
  Runtime,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { testTool } from '../../support/test-tools.ts';

const WORKFLOWS = fileURLToPath(new URL('../../../src/workflows/index.ts', import.meta.url));

/** Keeps the worker's lines (started, stopped, replay noise) out of the test output; errors still show. */
export function quietRuntime(): void {
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: { core: 'ERROR' } } },
  });
}

/** llmgw's workflows, bundled: a bundle takes seconds, so a test file makes one for all its tests. */
export const bundleWorkflows = (): Promise<WorkflowBundleWithSourceMap> =>
  bundleWorkflowCode({ workflowsPath: WORKFLOWS, logger: new DefaultLogger('ERROR') });

/** A quiet runtime, the time-skipping test server and the bundle, made side by side. */
export async function timeSkipping(): Promise<[TestWorkflowEnvironment, WorkflowBundleWithSourceMap]> {
  quietRuntime();
  return Promise.all([
    testTool('testserver').then((path) =>
      TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path } } }),
    ),
    bundleWorkflows(),
  ]);
}
