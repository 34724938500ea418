-- Bearer tokens. Only the sha256 of a secret is kept (src/contracts/secrets.ts says why that suffices);
-- the secret itself is shown once, when the token is made.
create table api_tokens (
  name text primary key,
  role text not null check (role in ('admin', 'operator', 'viewer', 'reporter')),
  -- operator: the scope it manages beneath; viewer, reporter: the subtree they are limited to (null: all)
  scope text,
  -- reporter: the models it may report load for (null: any)
  models text[],
  secret_sha256 bytea not null,
  created_by text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz
);
-- A request is matched by the first 8 bytes of its secret's hash; the whole hash is then compared in
-- constant time by the API, never by the store.
create index api_tokens_lookup on api_tokens (substring(secret_sha256 from 1 for 8));

-- Every change made through the API: who, when, what, and the thing before and after (never a secret).
create table audit_log (
  id bigserial primary key,
  at timestamptz not null default now(),
  actor text not null,
  action text not null,
  target text not null,
  before jsonb,
  after jsonb
);
