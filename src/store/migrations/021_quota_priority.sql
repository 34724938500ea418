-- Priority nests (POLICY.md): a scope's priority among its siblings, on its quota so that only whoever
-- may change the quota sets it (0 unless given). The bounds are the API's and a model priority's.
alter table capacity_quotas add column priority integer not null default 0
  constraint capacity_quotas_priority_range check (priority between -1000000 and 1000000);
