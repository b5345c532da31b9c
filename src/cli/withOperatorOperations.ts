import { buildAppDeps } from '../app/buildAppDeps.ts'
import { type OperatorOperations, operatorOperations } from '../app/operatorOperations.ts'
import type { Config } from '../config.ts'
import { DataDirHeldError, findDataDirHolder } from '../store/dataDirLock.ts'
import { operatorClient } from './operatorClient.ts'

/**
 * Runs an operator command (`swapeazi keys`, `swapeazi intel`) where the store's one owner is: on a PGlite data
 * directory a live process holds, by that process through its operator endpoint; otherwise on the store opened here
 * (taking the directory's lock for the command's duration) and closed after, as on PostgreSQL.
 */
export async function withOperatorOperations<T>(config: Config, work: (operations: OperatorOperations) => Promise<T>): Promise<T> {
  const dataDir = config.store.driver === 'pglite' && !config.store.dataDir.startsWith('memory://') ? config.store.dataDir : undefined
  const holder = dataDir === undefined ? undefined : await findDataDirHolder(dataDir)
  if (dataDir !== undefined && holder !== undefined) return work(operatorClient(dataDir, holder))
  let deps: Awaited<ReturnType<typeof buildAppDeps>>
  try {
    deps = await buildAppDeps({ ...config, logLevel: 'silent' })
  } catch (error) {
    // Taken between the look and the open: by a service, whose endpoint runs the command.
    if (dataDir !== undefined && error instanceof DataDirHeldError && error.holder.socket !== null)
      return work(operatorClient(dataDir, error.holder))
    throw error
  }
  try {
    return await work(operatorOperations(deps))
  } finally {
    await deps.market?.stop()
    await deps.store.sql.close()
  }
}
