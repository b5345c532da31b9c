import * as z from 'zod'

/** Every stable error code the service answers with; src/http/problem.ts maps each to its HTTP status. */
export const ERROR_CODES = [
  'invalid_request',
  'unsupported_media_type',
  'payload_too_large',
  'not_found',
  'method_not_allowed',
  'unsupported_token',
  'not_agent_callable',
  'amount_out_of_range',
  'route_not_executable',
  'address_screened',
  'conflicting_payment',
  'rate_limited',
  'invalid_key',
  'invalid_quote',
  'quote_expired',
  'internal_error',
] as const
export const ErrorCode = z.enum(ERROR_CODES)
export type ErrorCode = z.infer<typeof ErrorCode>

export const FieldError = z.object({
  field: z.string().describe('Dotted path of the offending field, or "(body)"'),
  message: z.string(),
})
export type FieldError = z.infer<typeof FieldError>

/** RFC 9457 problem details with our stable `code`; extra members carry what an agent needs to act. */
export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: ErrorCode,
    instance: z.string().optional(),
    requestId: z.string().optional(),
    errors: z.array(FieldError).optional(),
  })
  .catchall(z.unknown())
  .meta({ id: 'Problem' })
export type Problem = z.infer<typeof Problem>
