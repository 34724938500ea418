-- On a draining victim of a reclaim or a preemption, the replica reserved in its place (issue 37):
-- while that one is pending, the room they share is counted once toward what their scopes hold
-- (policy/holdings.ts countedOnce). Null for every other replica, and for victims drained before.
alter table replicas add column reclaimed_for text;
-- A start's victims still draining for it (store/reservations.ts admitStart): it waits for them, so that
-- the room is never held by both at once.
create index replicas_draining_reclaimed_for on replicas (reclaimed_for) where state = 'draining';
