-- Kubernetes nodes (issue 33): a node a Kubernetes cluster has, kept in step with it by the worker that
-- holds the cluster lease (src/cluster/kubernetes/). Its heartbeat_at is when its Ready condition was
-- last seen True, so that a node not Ready for LLMGW_NODE_LOST_S is lost as a silent agent's node is.
alter table nodes drop constraint nodes_driver_check;
alter table nodes add constraint nodes_driver_check check (driver in ('sim', 'agent', 'kubernetes'));
