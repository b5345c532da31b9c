import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js'
import type * as z from 'zod'
import type { Payer } from './payer.ts'
import { describeFailure, type ServiceClient, type ServiceResponse } from './serviceClient.ts'

/** The MCP resource holding the capability manifest. */
export const CAPABILITIES_URI = 'swapeazi://capabilities'

/** What every tool may use: the service client, the payer when a wallet is configured, the API key when one is. */
export type ToolContext = {
  client: ServiceClient
  payer?: Payer
  /** A SwapEazi key (se_...) for keyed calls: pro corridor intelligence. Never echoed. */
  apiKey?: string
}

/** A tool's answer: the structured result and a one-line summary, or a failure an agent can act on (text only). */
export type ToolResult<Output> = { ok: true; structured: Output; summary: string } | { ok: false; message: string }

/** One MCP tool (DESIGN 8): zod input and output shapes, annotations, a description written for a model, a handler. */
export type ToolDefinition<Input extends z.ZodRawShape = z.ZodRawShape, Output extends z.ZodRawShape = z.ZodRawShape> = {
  name: string
  title: string
  description: string
  inputSchema: Input
  outputSchema: Output
  annotations: ToolAnnotations
  run(context: ToolContext, args: z.infer<z.ZodObject<Input>>): Promise<ToolResult<z.infer<z.ZodObject<Output>>>>
}

/** Keeps each tool's types exact where it is written, and erases them for the tools array. */
export function defineTool<Input extends z.ZodRawShape, Output extends z.ZodRawShape>(tool: ToolDefinition<Input, Output>): ToolDefinition {
  return tool as unknown as ToolDefinition
}

export const failed = (message: string): { ok: false; message: string } => ({ ok: false, message })

/** A failed service call as a tool failure: the service's own message, which says what to do next. */
export const failedCall = (response: ServiceResponse): { ok: false; message: string } => failed(describeFailure(response))

/** Read-only tools: they call the service and change nothing (DESIGN 8). */
export const READ_ONLY: ToolAnnotations = { readOnlyHint: true, openWorldHint: true }
