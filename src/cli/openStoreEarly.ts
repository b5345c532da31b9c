// Before the rest of `swapeazi serve` loads (issue 15 item 10): the embedded store starts opening on its own thread
// while this thread evaluates the service's modules, instead of after them. Only what chooses the store is read here
// (src/store/storeVariables.ts, as config.ts reads it); the configuration is validated later, as before, and an open that
// the command does not take is closed before the process exits (main.ts).
import { openPgliteSqlEarly } from '../store/openPgliteSql.ts'
import { takePrestartedThread } from '../store/pgliteThread.ts'
import { DEFAULT_DATA_DIR, dataDirOf, setVariables } from '../store/storeVariables.ts'

/**
 * For `swapeazi serve` (also the command when none is given) on the embedded store: begins opening its data directory,
 * on the store's thread scripts/runCompiledCli.js started, if it did. Any other command ends that thread.
 */
export function openStoreEarly(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): void {
  const dataDir = earlyDataDir(argv, env)
  if (dataDir === undefined) void takePrestartedThread()?.terminate()
  else openPgliteSqlEarly(dataDir)
}

function earlyDataDir(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (argv.length > 1 || (argv[0] ?? 'serve') !== 'serve') return undefined
  const set = setVariables(env)
  if (set['DATABASE_URL'] !== undefined) return undefined
  const dataDir = dataDirOf(set['SWAPEAZI_DATA_DIR'] ?? DEFAULT_DATA_DIR)
  return dataDir.startsWith('memory://') ? undefined : dataDir
}
