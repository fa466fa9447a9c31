-- When each user last logged in with their password (the users API's last_login), stamped by the
-- statement that opens the session; null before the first login. Not indexed: nothing searches it,
-- and an unindexed column keeps the login's update of the row a HOT update.
ALTER TABLE users ADD COLUMN last_login timestamptz;
