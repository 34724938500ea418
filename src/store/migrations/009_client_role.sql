-- A client key calls the models of its scope through the gateway (POST /v1/chat/completions, ...).
alter table api_tokens drop constraint api_tokens_role_check;
alter table api_tokens
  add constraint api_tokens_role_check
  check (role in ('admin', 'operator', 'viewer', 'reporter', 'metrics', 'client'));
