-- Where a running replica serves (its engine's base URL), when its driver knows it.
alter table replicas add column endpoint text;
