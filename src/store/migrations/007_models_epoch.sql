-- A counter that every change of models or their profiles moves on (store/reservation-base.ts): a
-- reservation may then check a burst against the models a worker read earlier while the counter has
-- not moved, instead of reading every model again under the reservation lock.
create table store_epochs (
  name text primary key,
  epoch bigint not null default 0
);
insert into store_epochs (name) values ('models');

create function bump_models_epoch() returns trigger language plpgsql as $$
begin
  update store_epochs set epoch = epoch + 1 where name = 'models';
  return null;
end;
$$;

create trigger models_epoch after insert or update or delete on models
  for each statement execute function bump_models_epoch();
create trigger profiles_epoch after insert or update or delete on profiles
  for each statement execute function bump_models_epoch();
