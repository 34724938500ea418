-- Indexes for the replica lookups that run on every pass, start or tick and read the whole table
-- without them (at 1,000 models, 12.7 million rows scanned in a 90-second fan-out, bench/scale):
-- a plan's start backoff (store/replicas.ts recentOutcomes),
create index replicas_model_updated on replicas (model, updated_at);
-- a reservation's replicas reserved since its reading (activeReplicasAfter),
create index replicas_active_seq on replicas (seq) where state not in ('stopped', 'failed');
-- a start's victims still draining for its model (store/reservations.ts admitStart),
create index replicas_draining_for on replicas (preempted_for) where state = 'draining';
-- and the simulated cluster's tick, which moves starting and draining replicas along.
create index replicas_moving on replicas (state, updated_at) where state in ('starting', 'draining');
