-- A metrics token may only GET /metrics (Prometheus): the figures name every tenant's scopes and models.
alter table api_tokens drop constraint api_tokens_role_check;
alter table api_tokens
  add constraint api_tokens_role_check check (role in ('admin', 'operator', 'viewer', 'reporter', 'metrics'));
