-- Tenancy: org > team > project. Names are unique among siblings, case-insensitively.
create table orgs (
  id text primary key,
  name text not null,
  created_at timestamptz not null default now()
);
create unique index orgs_name on orgs (lower(name));

create table teams (
  id text primary key,
  org_id text not null references orgs (id),
  name text not null,
  created_at timestamptz not null default now()
);
create unique index teams_name on teams (org_id, lower(name));

create table projects (
  id text primary key,
  team_id text not null references teams (id),
  name text not null,
  created_at timestamptz not null default now()
);
create unique index projects_name on projects (team_id, lower(name));

-- One quota per scope key (org:ID, team:ID, project:ID); guarantee and limit are Resources or null.
create table capacity_quotas (
  scope text primary key,
  guarantee jsonb,
  "limit" jsonb,
  updated_by text not null,
  updated_at timestamptz not null default now()
);

create table models (
  name text primary key,
  owner text,
  min_replicas integer not null,
  max_replicas integer not null,
  target_tokens_per_sec double precision,
  -- set while the model's replicas drain before it is removed
  deleting boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index models_owner on models (owner);

create table profiles (
  model text not null references models (name) on delete cascade,
  name text not null,
  priority integer not null,
  resources jsonb not null,
  gpu_model text,
  default_concurrency integer,
  engine jsonb,
  position integer not null,
  primary key (model, name)
);

create table measurements (
  model text not null,
  profile text not null,
  max_concurrency_at_slo double precision not null,
  throughput_tok_per_sec double precision not null,
  slo jsonb not null,
  points jsonb,
  tool text,
  measured_at timestamptz not null,
  primary key (model, profile)
);

create table nodes (
  name text primary key,
  capacity jsonb not null,
  gpu_model text,
  labels jsonb not null default '{}',
  state text not null default 'ready',
  created_at timestamptz not null default now()
);

-- A replica holds its resources from placed (pending) until stopped or failed.
create table replicas (
  id text primary key,
  model text not null,
  profile text not null,
  node text not null,
  resources jsonb not null,
  state text not null,
  reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index replicas_active on replicas (model) where state not in ('stopped', 'failed');
create index replicas_node on replicas (node) where state not in ('stopped', 'failed');

-- The latest report of each source counts.
create table load_reports (
  model text not null,
  source text not null,
  in_flight integer not null,
  waiting integer not null,
  reported_at timestamptz not null,
  primary key (model, source)
);

create table decisions (
  id bigserial primary key,
  model text not null,
  at timestamptz not null default now(),
  action text not null,
  reason text not null,
  replica text,
  profile text,
  node text,
  inputs jsonb not null
);
create index decisions_model on decisions (model, id desc);
