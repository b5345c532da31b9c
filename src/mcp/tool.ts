import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import type { Payer } from './payer.ts'
import { describeFailure, type ServiceClient, type ServiceResponse } from './serviceClient.ts'

/** The MCP resource holding the capability manifest. */
export const CAPABILITIES_URI = 'swapeazi://capabilities'

/** What every tool may use: the service client, the payer when a wallet is configured, the API key when one is. */
export type ToolContext = {
  client: ServiceClient
  payer?: Payer
  /**
   * A SwapEazi key (se_...): createMcpServer's client sends it on every /api/v1/* call (the key's rate limit; pro
   * corridor intelligence with a pro key). Never echoed.
   */
  apiKey?: string
  /**
   * The caller pays paid tools itself over x402 (tool-result binding of x402 v2 over MCP): /mcp, unless the operator
   * lets the server's wallet pay. Paid tools then carry no output schema, since their PaymentRequired is structured.
   */
  callerPays?: boolean
}

/** What a call carries beside its arguments: the request's `params._meta` (x402/payment). */
export type ToolCall = { meta?: Record<string, unknown> }

/** A tool's answer: the structured result and a one-line summary, or a failure an agent can act on (text only). */
export type ToolResult<Output> =
  | { ok: true; structured: Output; summary: string; meta?: Record<string, unknown> }
  | { ok: false; message: string; structured?: Record<string, unknown>; meta?: Record<string, unknown>; detail?: string }

/** One MCP tool as it is written (DESIGN 8): zod input and output shapes, annotations, a description written for a model, a handler. */
export type ToolDefinition<Input extends z.ZodRawShape, Output extends z.ZodRawShape> = {
  name: string
  title: string
  description: string
  inputSchema: Input
  outputSchema: Output
  annotations: ToolAnnotations
  /** A paid tool: when the caller pays (`callerPays`), it is listed without its output schema. */
  paid?: true
  run(context: ToolContext, args: z.output<z.ZodObject<Input>>, call: ToolCall): Promise<ToolResult<z.output<z.ZodObject<Output>>>>
}

/**
 * A tool as the server holds it, whatever its shapes: its handler takes the arguments as they arrive and parses them
 * with the tool's own input schema (the SDK has already checked them against the same schema, so the parse only
 * recovers their type).
 */
export type Tool = Omit<ToolDefinition<z.ZodRawShape, z.ZodRawShape>, 'run'> & {
  run(context: ToolContext, args: unknown, call?: ToolCall): Promise<ToolResult<Record<string, unknown>>>
}

/** Keeps each tool's types exact where it is written; what it returns fits the tools array. */
export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(tool: ToolDefinition<Input, Output>): Tool {
  const input = z.object(tool.inputSchema)
  return { ...tool, run: (context, args, call = {}) => tool.run(context, input.parse(args), call) }
}

export const failed = (message: string): { ok: false; message: string } => ({ ok: false, message })

/** A failed service call as a tool failure: the service's own message, which says what to do next. */
export const failedCall = (response: ServiceResponse): { ok: false; message: string } => failed(describeFailure(response))

/** Read-only tools: they call the service and change nothing (DESIGN 8). */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: true }
