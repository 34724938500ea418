-- An agent's token bounds its node (issue 30): the admin who makes it gives the node's address, where
-- the gateway reaches the node's engines, and the most the node may declare (capacity, GPU model,
-- labels). Tokens made before carry neither: their agents are refused until an admin makes new ones.
alter table api_tokens add column node_address text;
alter table api_tokens add column node_bounds jsonb;
alter table api_tokens
  add constraint api_tokens_node_grant check (role = 'agent' or (node_address is null and node_bounds is null));

-- The address an agent's node was registered with (its token's): replicas' endpoints are built from it
-- and the port the agent reports, never taken from the agent whole.
alter table nodes add column address text;
