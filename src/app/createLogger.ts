import { type DestinationStream, pino, type Logger } from 'pino'

/** pino JSON on stderr (stdout belongs to MCP stdio), or on `destination`; secrets and payment material are redacted. */
export function createLogger(level: string, destination: DestinationStream = pino.destination(2)): Logger {
  return pino(
    {
      level,
      base: { service: 'swapeazi' },
      redact: {
        paths: [
          '*.quoteSecret',
          '*.secretKey',
          '*.privateKey',
          '*.apiKey',
          '*.signature',
          '*.xPayment',
          'req.headers["x-payment"]',
          'req.headers.authorization',
          'req.headers["x-swapeazi-key"]',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  )
}
