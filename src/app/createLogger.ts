import { type DestinationStream, pino, type Logger } from 'pino'
import { BaseError } from 'viem'

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
      serializers: { err: errorForLog },
    },
    destination,
  )
}

/** Any URL in `text`, down to its scheme and host: the path, query and user info of RPC URLs carry providers' API keys. */
export function redactUrls(text: string): string {
  return text.replace(
    /\b([a-z][a-z0-9+.-]*:\/\/)(?:[^\s/@"'<>]*@)?([^\s/?#"'<>]*)[^\s"'<>]*/gi,
    (_match, scheme: string, host: string) => `${scheme}${host}/…`,
  )
}

/** How deep a logged error's causes are followed. */
const MAX_CAUSES = 3

type LoggedError = { type: string; message: string; stack?: string; cause?: LoggedError }

/**
 * The `err` of a log line. viem's errors (and anything wrapping one) carry the request: the RPC URL in their message,
 * the URL, headers and JSON-RPC body as properties. A logged error keeps only its type, its message (viem's short
 * message and details) and its stack, every URL in them cut to scheme and host, and the same of its causes; no other
 * property. A string (some callers log a message) has its URLs cut too.
 */
export function errorForLog(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactUrls(value)
  if (!(value instanceof Error)) return value
  const message = value instanceof BaseError ? [value.shortMessage, value.details].filter((part) => part !== '').join(': ') : value.message
  const logged: LoggedError = { type: value.name, message: redactUrls(message) }
  // A stack opens with the whole message (viem's: the URL and the request body): keep the short one and the frames.
  if (value.stack !== undefined)
    logged.stack = redactUrls(
      [`${value.name}: ${message}`, ...value.stack.split('\n').filter((line) => line.startsWith('    at '))].join('\n'),
    )
  if (depth < MAX_CAUSES && value.cause instanceof Error) logged.cause = errorForLog(value.cause, depth + 1) as LoggedError
  return logged
}
