import type { ErrorCode } from '../schemas/problem.ts'

/** An expected failure a client can act on; the HTTP and MCP edges render it (problem+json, isError text). */
export class ServiceError extends Error {
  override name = 'ServiceError'
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly detail: Readonly<Record<string, unknown>> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}
