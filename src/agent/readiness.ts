/** What an engine answers 200 on once it serves: vLLM, SGLang and llama.cpp /health; any OpenAI server /v1/models. */
const READY_PATHS = ['/health', '/v1/models'];

/** Whether the engine at `url` says it is ready, within a second. */
export async function answersReady(url: string): Promise<boolean> {
  for (const path of READY_PATHS) {
    try {
      const answer = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(1000) });
      await answer.body?.cancel();
      if (answer.status === 200) return true;
    } catch {
      // Not listening yet, or too slow to answer: try the next path, then the next round.
    }
  }
  return false;
}

/**
 * Waits until the engine at `url` is ready: true then, false when `timeoutMs` passes first. Stops
 * waiting as soon as `gone` settles (the engine exited), with false.
 */
export async function waitUntilReady(
  url: string,
  timeoutMs: number,
  gone: Promise<unknown>,
  pollMs = 100,
): Promise<boolean> {
  let exited = false;
  gone.then(
    () => (exited = true),
    () => (exited = true),
  );
  const deadline = Date.now() + timeoutMs;
  while (!exited && Date.now() < deadline) {
    if (await answersReady(url)) return !exited;
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  return false;
}
