import type { Logger } from 'pino'
import type { McpSettings } from './mcpSettings.ts'
import type { BudgetStore } from '../store/createBudgetStore.ts'
import { createPayer } from './payer.ts'
import type { ServiceClient } from './serviceClient.ts'
import type { ToolContext } from './tool.ts'

/** The settings the tools run with, without the base URL (the caller has already chosen the client). */
export type ToolSettings = Omit<McpSettings, 'baseUrl' | 'allowedHosts'>

/** The tools' context: the client, the payer when a wallet is configured (its budget in `budget`), the API key. */
export function createToolContext(parameters: {
  client: ServiceClient
  settings: ToolSettings
  budget: BudgetStore
  clock: () => number
  log: Logger
}): ToolContext {
  const { client, settings, budget, clock, log } = parameters
  return {
    client,
    ...(settings.walletPrivateKey === undefined
      ? {}
      : {
          payer: createPayer({
            privateKey: settings.walletPrivateKey,
            client,
            budget,
            dailyBudgetAtomic: settings.dailyBudgetAtomic,
            clock,
            log,
          }),
        }),
    ...(settings.apiKey === undefined ? {} : { apiKey: settings.apiKey }),
  }
}
