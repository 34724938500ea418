/** What configures llmgw or its stores: a stack the tests start takes none of it from the caller's shell. */
const CALLERS_SETTINGS = /^(LLMGW_|TEMPORAL_|DATABASE_URL$|PORT$)/;
/** Except where the Temporal CLI is: a tool the caller may have put elsewhere, not a setting of the stack. */
const TOOLS = /^TEMPORAL_CLI$/;

/**
 * The environment of an llmgw process a test starts: the caller's (PATH, HOME, caches, proxies ...)
 * without its llmgw, Temporal, DATABASE_URL and PORT settings, then `set`: the test's own.
 */
export function stackEnvironment(
  set: Record<string, string> = {},
  parent: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const kept = Object.entries(parent).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && (!CALLERS_SETTINGS.test(entry[0]) || TOOLS.test(entry[0])),
  );
  return { ...Object.fromEntries(kept), ...set };
}
