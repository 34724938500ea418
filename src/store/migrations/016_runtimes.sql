-- Runtimes (issue 30): how engines run on nodes, defined by admins (PUT /api/v1/runtimes/{name}). A
-- profile names one and gives its parameters; a runtime that profiles name cannot be deleted. Profiles
-- stored before keep their inline engines as they were (an admin's own): GET /api/v1/models/{name}
-- warns of each.
create table runtimes (
  name text primary key,
  spec jsonb not null,
  updated_by text not null,
  updated_at timestamptz not null default now()
);

alter table profiles add column runtime text references runtimes (name) on delete restrict;
alter table profiles add column params jsonb;
