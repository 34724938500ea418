/**
 * Whether a change is new to the feed, by key: the feed reads its last moments again (a change
 * committed late carries the time and id its transaction took before others), so one change can be
 * read twice, and must go out once. The oldest keys are forgotten past `capacity`, far more than those
 * moments hold.
 */
export function sentOnce(capacity = 10_000): (key: string) => boolean {
  const sent = new Set<string>();
  return (key) => {
    if (sent.has(key)) return false;
    sent.add(key);
    if (sent.size > capacity) sent.delete(sent.values().next().value!);
    return true;
  };
}
