-- Which transaction last wrote each replica row: a worker's next reading of the live state asks only
-- for the rows written since its last one began (store/replicas.ts readActiveReplicas), instead of
-- every active replica again.
alter table replicas add column changed_xid xid8 not null default pg_current_xact_id();
create index replicas_changed on replicas (changed_xid);

create function replica_changed() returns trigger language plpgsql as $$
begin
  new.changed_xid := pg_current_xact_id();
  return new;
end;
$$;

create trigger replica_changed before update on replicas
  for each row execute function replica_changed();
