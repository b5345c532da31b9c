import type { Context } from 'hono'
import type * as z from 'zod'
import type { FieldError } from '../schemas/problem.ts'
import { ServiceError } from '../service/serviceError.ts'
import { requestHeader } from './requestHeader.ts'

/** Zod issues as our field list: dotted paths, "(body)" for the root. */
export function fieldErrors(error: z.ZodError): FieldError[] {
  return error.issues.map((issue) => ({
    field: issue.path.length === 0 ? '(body)' : issue.path.map(String).join('.'),
    message: issue.message,
  }))
}

/**
 * Reads a JSON body and parses it with `schema`. Empty: 400; wrong content type: 415; not JSON: 400; schema failure:
 * 400 listing each field. The size limit is enforced before this by the body-limit middleware.
 */
export async function readJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  return parseJsonBody(await readJsonText(c), schema)
}

/**
 * The body's text, refused when it is empty (400) or not declared as JSON (415). `bodyName` is the endpoint's body
 * schema as /openapi.json names it (QuoteParams, TransactionHint…), for the empty body's message.
 */
export async function readJsonText(c: Context, bodyName?: string): Promise<string> {
  const text = await c.req.text()
  if (text.trim() === '')
    throw new ServiceError(
      'invalid_request',
      bodyName === undefined
        ? `The request body is empty; send this endpoint's body as a JSON object (GET /openapi.json describes it).`
        : `The request body is empty; send ${bodyName} as a JSON object.`,
      { errors: [{ field: '(body)', message: 'is required' }] },
    )
  const contentType = requestHeader(c, 'content-type') ?? ''
  if (!/^application\/json\s*(;|$)/i.test(contentType))
    throw new ServiceError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json.', {
      received: contentType || '(none)',
    })
  return text
}

/** JSON text parsed with `schema`: not JSON is a 400, a schema failure a 400 listing each field. */
export function parseJsonBody<S extends z.ZodType>(text: string, schema: S): z.infer<S> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ServiceError('invalid_request', 'The request body is not valid JSON.', {
      errors: [{ field: '(body)', message: 'is not valid JSON' }],
    })
  }
  const parsed = schema.safeParse(value)
  if (!parsed.success) {
    const errors = fieldErrors(parsed.error)
    throw new ServiceError(
      'invalid_request',
      `The request body failed validation: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}.`,
      { errors },
    )
  }
  return parsed.data
}
