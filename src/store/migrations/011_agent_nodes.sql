-- Real nodes (issue 12): a node says which driver serves it, `sim` (the simulated cluster) or `agent`
-- (an `llmgw agent` on the machine, reached through the Temporal task queue llmgw-node:<name>). An
-- agent's node is `lost` once its agent is silent for LLMGW_NODE_LOST_S, and ready again when it
-- heartbeats; its replicas are then `lost`: they hold no room, are replaced elsewhere and, neither
-- failed nor served, count for nothing in the start backoff (store/replicas.ts recentOutcomes).
alter table nodes add column driver text not null default 'sim' check (driver in ('sim', 'agent'));
alter table nodes add column heartbeat_at timestamptz;

-- The replicas that hold room are those not stopped, failed or lost: the partial indexes say so too.
drop index replicas_active;
drop index replicas_node;
drop index replicas_node_order;
drop index replicas_active_seq;
create index replicas_active on replicas (model) where state not in ('stopped', 'failed', 'lost');
create index replicas_node on replicas (node) where state not in ('stopped', 'failed', 'lost');
create index replicas_node_order on replicas (node, seq) where state not in ('stopped', 'failed', 'lost');
create index replicas_active_seq on replicas (seq) where state not in ('stopped', 'failed', 'lost');

-- An agent token registers and reports for its one node only.
alter table api_tokens add column node text;
alter table api_tokens drop constraint api_tokens_role_check;
alter table api_tokens
  add constraint api_tokens_role_check
  check (role in ('admin', 'operator', 'viewer', 'reporter', 'metrics', 'client', 'agent'));
alter table api_tokens
  add constraint api_tokens_agent_node check ((role = 'agent') = (node is not null));
