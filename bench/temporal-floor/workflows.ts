// The emptiest reconciler: it waits for a wake signal and answers it with one local activity, so that a
// fan-out of these measures what Temporal alone costs per pass (bench/temporal-floor/main.ts).
import { condition, defineSignal, proxyLocalActivities, setHandler } from '@temporalio/workflow';

export const wake = defineSignal('wake');
const { touch } = proxyLocalActivities<{ touch(workflowId: string): Promise<void> }>({
  startToCloseTimeout: '30 seconds',
});

export async function emptyReconciler(workflowId: string): Promise<void> {
  let woken = 0;
  setHandler(wake, () => {
    woken++;
  });
  for (;;) {
    // A resync period, as reconcilers have; the benchmark ends before it is up.
    await condition(() => woken > 0, '30 minutes');
    woken = 0;
    await touch(workflowId);
  }
}
