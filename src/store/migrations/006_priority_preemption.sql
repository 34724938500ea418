-- Priority and fair sharing among models (POLICY.md): a model's priority (0 unless given), whether the
-- models under a scope may preempt (null: 'lower-claim', the default), and, on a draining replica, the
-- model it was preempted for. The bounds are the API's, so a row the API could not have written is refused.
alter table models add column priority integer not null default 0
  constraint models_priority_range check (priority between -1000000 and 1000000);
alter table capacity_quotas add column preemption text
  constraint capacity_quotas_preemption_check check (preemption in ('never', 'lower-claim'));
alter table replicas add column preempted_for text;
