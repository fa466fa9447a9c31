/** An API key's name: 1 to 64 characters of a-z 0-9 . _ -, starting with a letter or digit. */
export const APPNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A username: 1 to 64 characters of letters, digits, . _ @ -, starting with a letter or digit. */
export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
/** USERNAME_PATTERN in words, for the messages that refuse a username. */
export const USERNAME_RULE = '1 to 64 characters of letters, digits, . _ @ -, starting with a letter or digit';
