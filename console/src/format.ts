/** The contract's appname rule, checked as it is typed (the API checks it again). */
export const APPNAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;
export const APPNAME_RULE = '1 to 64 characters of a-z 0-9 . _ -, starting with a letter or digit';

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** An instant (ISO 8601, or Unix seconds as last_login is) as a local date and time. */
export function localDateTime(instant: string | number): string {
  return dateTime.format(typeof instant === 'number' ? new Date(instant * 1000) : new Date(instant));
}

/** What is wrong with an appname as typed, or undefined. */
export function appnameProblem(value: string): string | undefined {
  if (value === '') return 'Required.';
  return APPNAME_PATTERN.test(value) ? undefined : `Must be ${APPNAME_RULE}.`;
}
