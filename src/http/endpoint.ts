import type { Context } from 'hono'
import type * as z from 'zod'
import type { AppDeps, AppEnv } from './appEnv.ts'
import { parseJsonBody, readJsonText } from './readJsonBody.ts'
import { ServiceError } from '../service/serviceError.ts'

export type Method = 'GET' | 'POST'

/** A documented response: a JSON body (one schema, or several as `oneOf`), a problem, or a bare description. */
export type ResponseDoc = {
  description: string
  body?: z.ZodType | readonly z.ZodType[]
  isProblem?: boolean
  headers?: Readonly<Record<string, { description: string; schema: Record<string, unknown> }>>
}

/** The OpenAPI operation of an endpoint, beside its handler; schemas are the zod objects that parse the wire. */
export type OperationDoc = {
  summary: string
  operationId: string
  description?: string
  security?: readonly Record<string, readonly string[]>[]
  parameters?: readonly Record<string, unknown>[]
  responses: Readonly<Record<number, ResponseDoc>>
}

/** What a handler reads of its request beyond the context: the body, parsed with the declared schema. */
export type EndpointInput<Body> = {
  /** The body parsed with the declared schema: 400 (not JSON, or failing it), 415 (not JSON content). */
  body(): Promise<Body>
  /** The body's text, refused when empty (400) or not declared JSON (415). */
  bodyText(): Promise<string>
  /** Parses a body text read with `bodyText` (400 on failure). */
  parse(text: string): Body
}

/** Per-app state a handler factory may share with others (a memo, a page rendered once). */
export type AppScope = {
  /** The value kept under `key` for this app, made on first use. */
  once<T>(key: symbol, make: () => T): T
  /** Every endpoint of this app (the OpenAPI document is derived from them). */
  endpoints: readonly Endpoint[]
}

export type Handler<Body> = (c: Context<AppEnv>, input: EndpointInput<Body>) => Response | Promise<Response>

export type EndpointDeclaration<Body> = {
  method: Method
  /** OpenAPI form: `{name}` for a path parameter. */
  path: string
  /** The request body's schema (a POST with a JSON body). */
  body?: z.ZodType<Body>
  /**
   * Runs on the body's JSON before its schema, to refuse what makes the schema's complaints beside the point (a chain
   * this service does not build for, whose addresses are not EVM addresses): throws a ServiceError, or returns.
   */
  screenBody?: (deps: AppDeps, value: unknown) => void
  /** The OpenAPI operation; omitted for pages that are not API (the portal). */
  doc?: OperationDoc
  /** Makes the handler for one app: called once when the app is built, so it may prepare what every request reuses. */
  handler: (deps: AppDeps, scope: AppScope) => Handler<Body>
}

/** An endpoint as the app and the OpenAPI builder read it: its declaration with the body typing erased. */
export type Endpoint = {
  method: Method
  path: string
  body?: z.ZodType
  doc?: OperationDoc
  /** The Hono path (`:name` for `{name}`). */
  routePath: string
  makeHandler(deps: AppDeps, scope: AppScope): (c: Context<AppEnv>) => Response | Promise<Response>
}

const NO_BODY_SCHEMA = 'this endpoint declares no body schema'

/**
 * Declares one endpoint once: method, path, body schema, OpenAPI operation and handler. The app's routes, its 405
 * answers and /openapi.json are derived from these declarations.
 */
export function defineEndpoint<Body = never>(declaration: EndpointDeclaration<Body>): Endpoint {
  const { method, path, body, doc, screenBody } = declaration
  const bodyName = body?.meta()?.id
  const parserFor =
    (deps: AppDeps) =>
    (text: string): Body => {
      if (body === undefined) throw new TypeError(`${method} ${path}: ${NO_BODY_SCHEMA}`)
      return parseJsonBody(text, body, screenBody === undefined ? undefined : (value) => screenBody(deps, value))
    }
  return {
    method,
    path,
    ...(body === undefined ? {} : { body }),
    ...(doc === undefined ? {} : { doc }),
    routePath: path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1'),
    makeHandler(deps, scope) {
      const handle = declaration.handler(deps, scope)
      const parse = parserFor(deps)
      // An /api/v1 GET that declares no query parameter refuses any: `?chain=pol` on the corridor list used to answer
      // every corridor as if filtered. An endpoint that declares some checks its own (intelligence's amount).
      const refusesQuery =
        method === 'GET' && path.startsWith('/api/v1/') && !(doc?.parameters ?? []).some((parameter) => parameter.in === 'query')
      return (c) => {
        if (refusesQuery) refuseQueryParameters(c.req.url)
        return handle(c, {
          body: async () => parse(await readJsonText(c, bodyName)),
          bodyText: () => readJsonText(c, bodyName),
          parse,
        })
      }
    },
  }
}

/** 400 naming the query parameters sent to an endpoint that takes none; nothing when there are none. */
function refuseQueryParameters(url: string): void {
  const names = [...new Set(new URL(url).searchParams.keys())]
  if (names.length === 0) return
  const message = `has ${names.map((name) => `"${name.slice(0, 40)}"`).join(', ')}, but this endpoint takes no query parameters: they are refused, not ignored (nothing here filters or pages)`
  throw new ServiceError('invalid_request', `The query string ${message}.`, { errors: [{ field: '(query)', message }] })
}
