import pino from 'pino';

export type Logger = pino.Logger;

/**
 * Structured JSON logs on stdout. Callers log ids, never secrets or tokens; the redaction
 * is a second line of defence for fields that might carry one by mistake.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc-webhooks' },
      redact: {
        paths: ['secret', '*.secret', 'token', '*.token', 'authorization', '*.authorization', 'headers.authorization'],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
