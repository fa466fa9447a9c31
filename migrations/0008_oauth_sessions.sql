-- The OAuth 2.0 token endpoint. A session remembers the client it was opened for (its refresh
-- tokens are bound to it; NULL: DEFAULT_CLIENT_ID), the scope it was granted (NULL: all its
-- principal's role grants, whatever the role is now; a refresh may narrow it), and whether its
-- tokens come with an ID token for that client (a user's login by a named client asking for openid).
ALTER TABLE sessions
  ADD COLUMN client_id text,
  ADD COLUMN scope text,
  ADD COLUMN id_token_client boolean NOT NULL DEFAULT false;
