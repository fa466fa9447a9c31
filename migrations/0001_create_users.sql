-- Human principals. Passwords are bcrypt hashes; the clear password is never stored.
CREATE TABLE users (
  id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  username      text COLLATE "C" NOT NULL UNIQUE,
  password_hash text NOT NULL,
  role          text CHECK (role IN ('viewer', 'editor', 'admin')),
  disabled      boolean NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
