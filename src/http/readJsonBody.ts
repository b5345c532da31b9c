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
 * The body's text, refused when it is empty (400), not declared as JSON (415) or not UTF-8 (400, U+FFFD included). `bodyName` is the
 * endpoint's body schema as /openapi.json names it (QuoteParams, TransactionHint…), for the empty body's message.
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
  // The body is read as UTF-8, as JSON must be: another charset would be misread, not converted.
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType)?.[1]
  if (charset !== undefined && !/^utf-?8$/i.test(charset))
    throw new ServiceError(
      'unsupported_media_type',
      `Send the body as UTF-8 JSON (Content-Type: application/json; charset=utf-8), not ${charset}.`,
      {
        received: contentType,
      },
    )
  const encoding = requestHeader(c, 'content-encoding')
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    throw new ServiceError('unsupported_media_type', `Send the body uncompressed, without Content-Encoding (this one is ${encoding}).`, {
      received: `content-encoding: ${encoding}`,
    })
  // The decoder puts U+FFFD where bytes are not UTF-8, and an answer would echo it as if the client had sent it. No
  // field of ours takes that character, so its presence is refused as what it almost always is (checked after the
  // headers: a compressed body is not UTF-8, and its 415 says why). Reading the bytes to tell the two apart would copy
  // every body once more, on the hot path.
  if (text.includes('\uFFFD'))
    throw new ServiceError(
      'invalid_request',
      'The request body is not valid UTF-8, or carries U+FFFD (the character that stands in for bytes that are not UTF-8); send JSON encoded as UTF-8.',
      { errors: [{ field: '(body)', message: 'is not valid UTF-8' }] },
    )
  return text
}

/** JSON text parsed with `schema`: not JSON is a 400, a schema failure a 400 listing each field. */
export function parseJsonBody<S extends z.ZodType>(text: string, schema: S, screen?: (value: unknown) => void): z.infer<S> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new ServiceError('invalid_request', 'The request body is not valid JSON.', {
      errors: [{ field: '(body)', message: 'is not valid JSON' }],
    })
  }
  const repeated = repeatedKey(text, value)
  if (repeated !== undefined)
    throw new ServiceError(
      'invalid_request',
      `The request body names ${JSON.stringify(repeated)} twice in one object; send each field once (which one was meant is not ours to guess).`,
      { errors: [{ field: '(body)', message: `has the key ${JSON.stringify(repeated)} twice` }] },
    )
  screen?.(value)
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

/**
 * A key some object of the JSON `text` names twice, or undefined. JSON.parse keeps the last silently, where a proxy,
 * a wallet's display or a firewall reading the first would see another recipient or amount than the one built.
 * Cheap first: every member in the text ends in `"` then `:`, so when the text holds no more such pairs than `value`
 * (its parse) has members, none repeats; only otherwise is the text scanned.
 */
export function repeatedKey(text: string, value: unknown): string | undefined {
  const colons = text.match(/"\s*:/g)?.length ?? 0
  return colons > membersOf(value) ? scanForRepeatedKey(text) : undefined
}

/**
 * The members of every object in `value`, counted with a stack of our own: a 64 KiB body can nest 30,000 levels deep,
 * past what a recursive walk's call stack holds (a RangeError, answered as the server's fault).
 */
function membersOf(value: unknown): number {
  let count = 0
  const pending: unknown[] = [value]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next !== 'object' || next === null) continue
    if (Array.isArray(next)) pending.push(...next)
    else {
      const members = Object.values(next)
      count += members.length
      pending.push(...members)
    }
  }
  return count
}

/** The scan of valid JSON text: per open object, the keys seen (escapes decoded, so "\u0061" is "a"). */
function scanForRepeatedKey(text: string): string | undefined {
  const open: (Set<string> | null)[] = []
  let isKeyNext = false
  for (let at = 0; at < text.length; at++) {
    const char = text[at]
    if (char === '"') {
      let end = at + 1
      while (text[end] !== '"') end += text[end] === '\\' ? 2 : 1
      const keys = open[open.length - 1]
      if (isKeyNext && keys !== undefined && keys !== null) {
        const key = JSON.parse(text.slice(at, end + 1)) as string
        if (keys.has(key)) return key
        keys.add(key)
        isKeyNext = false
      }
      at = end
    } else if (char === '{') {
      open.push(new Set())
      isKeyNext = true
    } else if (char === '[') open.push(null)
    else if (char === '}' || char === ']') open.pop()
    else if (char === ',') isKeyNext = open[open.length - 1] !== null
  }
  return undefined
}
