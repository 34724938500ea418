-- The order in which replicas were reserved. Rows are inserted under the reservation lock, so a higher
-- number is a later reservation: a pending replica starts once what runs on its node and what was
-- reserved there before it fit the node.
alter table replicas add column seq bigserial;
create index replicas_node_order on replicas (node, seq) where state not in ('stopped', 'failed');
