-- Console sessions (issue 30): the browser's cookie holds an opaque session ID, never the bearer token.
-- Only hashes are kept: of the ID (what the cookie holds) and of the token it signed in with (what
-- api_tokens keeps), so a leaked table lets nobody in. Signing out deletes the row.
create table console_sessions (
  id_sha256 bytea primary key,
  token_sha256 bytea not null,
  expires_at timestamptz not null
);
create index console_sessions_expires_at on console_sessions (expires_at);
