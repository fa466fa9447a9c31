import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Every place a secret could sit in a logged object. Request and response serializers already
 * leave bodies and headers out; this is the second line of defence.
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'authorization',
  'password',
  'appkey',
  'jwt',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  '*.password',
  '*.appkey',
  '*.jwt',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  '*.id_token',
  '*.authorization',
];

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}

export type { Logger };
