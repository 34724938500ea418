-- A replica whose engine ended after it had served is `crashed` (issue 31), not `failed`: failed starts
-- and crashes are backed off each on their own. Neither holds room: the partial indexes say so too.
drop index replicas_active;
drop index replicas_node;
drop index replicas_node_order;
drop index replicas_active_seq;
create index replicas_active on replicas (model) where state not in ('stopped', 'failed', 'crashed', 'lost');
create index replicas_node on replicas (node) where state not in ('stopped', 'failed', 'crashed', 'lost');
create index replicas_node_order on replicas (node, seq) where state not in ('stopped', 'failed', 'crashed', 'lost');
create index replicas_active_seq on replicas (seq) where state not in ('stopped', 'failed', 'crashed', 'lost');
-- Crashes back a profile off too (policy/backoff.ts): the models that failed a start or crashed lately.
drop index replicas_failed;
create index replicas_failed on replicas (updated_at) where state in ('failed', 'crashed');
