-- The gateway's routing table (src/gateway/routing-table.ts) is read again when what it shows changed,
-- not on a blind timer: every write of a model, a profile, a measurement or a scope, and of a replica
-- that is or was ready, notifies the channel llmgw_routes. Postgres delivers a transaction's
-- notifications when it commits (a read that follows sees the write) and folds a transaction's equal
-- ones into one.
create function notify_routes() returns trigger language plpgsql as $$
begin
  perform pg_notify('llmgw_routes', '');
  return null;
end;
$$;

do $$
declare
  shown text;
begin
  foreach shown in array array['models', 'profiles', 'measurements', 'orgs', 'teams', 'projects'] loop
    execute format(
      'create trigger routes_changed after insert or update or delete or truncate on %I '
      'for each statement execute function notify_routes()', shown);
  end loop;
end;
$$;

-- Replicas are written often (placed, starting, reported, stopped): only a change the table shows
-- notifies, that of a replica that is or was ready, in its state, endpoint, model or profile.
create function notify_routes_replica() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    if new.state = 'ready' then perform pg_notify('llmgw_routes', ''); end if;
  elsif tg_op = 'DELETE' then
    if old.state = 'ready' then perform pg_notify('llmgw_routes', ''); end if;
  elsif (old.state = 'ready' or new.state = 'ready')
    and (old.state, old.endpoint, old.model, old.profile)
      is distinct from (new.state, new.endpoint, new.model, new.profile) then
    perform pg_notify('llmgw_routes', '');
  end if;
  return null;
end;
$$;

create trigger routes_changed after insert or update or delete on replicas
  for each row execute function notify_routes_replica();
create trigger routes_truncated after truncate on replicas
  for each statement execute function notify_routes();
