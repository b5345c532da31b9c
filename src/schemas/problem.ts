import * as z from 'zod'

/** Every stable error code the service answers with; src/http/problem.ts maps each to its HTTP status. */
export const ERROR_CODES = [
  'invalid_request',
  'unsupported_media_type',
  'payload_too_large',
  'request_timeout',
  'headers_too_large',
  'expectation_failed',
  'not_found',
  'method_not_allowed',
  'unsupported_token',
  'not_agent_callable',
  'amount_out_of_range',
  'no_route_found',
  'address_screened',
  'origin_not_allowed',
  'conflicting_payment',
  'rate_limited',
  'invalid_key',
  'invalid_quote',
  'quote_expired',
  'payment_unavailable',
  'router_not_deployed',
  'market_unavailable',
  'simulation_failed',
  'transaction_mismatch',
  'chain_not_tracked',
  'tracking_unavailable',
  'internal_error',
] as const
export const ErrorCode = z.enum(ERROR_CODES)
export type ErrorCode = z.infer<typeof ErrorCode>

/**
 * What bounds an amount, on 422 `amount_out_of_range`: the fee against a route's fixed costs, a bridge's minimum or
 * cap, the venues' depth, or `token_supply`: more than the token could ever hold (docs/money.md).
 */
export const AmountLimit = z
  .enum(['fee', 'bridge_minimum', 'bridge_maximum', 'liquidity', 'token_supply'])
  .describe(
    "amount_out_of_range: what bounds the amount. fee: the route's fixed costs exceed the fee; bridge_minimum, bridge_maximum: a bridge's range; liquidity: the venues' depth; token_supply: more than the token could ever hold (maxAmount)",
  )
export type AmountLimit = z.infer<typeof AmountLimit>

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
    limit: z.union([AmountLimit, z.number().describe('rate_limited: the limit of the policy that refused')]).optional(),
    viableRange: z
      .object({ min: z.string(), max: z.string(), token: z.string() })
      .optional()
      .describe('amount_out_of_range: the amounts of the source token that can be served (whole tokens)'),
    viableNearby: z
      .array(z.string())
      .optional()
      .describe(
        'amount_out_of_range for an amount inside viableRange that no route serves (whole atomic units make the fee and what is delivered step): the nearest amounts below and above it that route, in whole tokens',
      ),
    maxAmount: z
      .string()
      .optional()
      .describe('amount_out_of_range with limit token_supply: the most one amount, or a batch, may carry, in whole tokens'),
    field: z.string().optional().describe('The field the problem is about, where one is'),
    sharedWith: z
      .array(z.number().int())
      .optional()
      .describe(
        'amount_out_of_range on a batch leg: the indexes of the legs before it whose swaps took the pools its route swaps in, or whose deposits took the instant balance of the Across lane it bridges over',
      ),
    recipientsWithinGasCap: z
      .number()
      .int()
      .optional()
      .describe("invalid_request on a batch's recipients: how many recipients, from the first, fit in one transaction's gas"),
    routerChains: z
      .array(z.string())
      .optional()
      .describe(
        "router_not_deployed: the agent-callable chains with a router of this service's operator's own (`chains` names those the swap would need one on): swaps from them that swap on arrival only on them are sold",
      ),
  })
  .catchall(z.unknown())
  .meta({ id: 'Problem' })
export type Problem = z.infer<typeof Problem>
