// Before the rest of `swapeazi serve` loads (issue 15 item 10): the embedded store starts opening on its own thread
// while this thread compiles and evaluates the service's modules, instead of after them. The compiled CLI's launcher
// (scripts/runCompiledCli.js) calls it before it imports the CLI, main.ts again (run from the sources): the second
// call finds the open begun. Only what chooses the store is read here (src/store/storeVariables.ts, as config.ts
// reads it); the configuration is validated later, as before, and an open that the command does not take is closed
// before the process exits (main.ts).
import { openPgliteSqlEarly } from '../store/openPgliteSql.ts'
import { DEFAULT_DATA_DIR, dataDirOf, setVariables } from '../store/storeVariables.ts'

/** For `swapeazi serve` (also the command when none is given) on the embedded store: begins opening its data directory. */
export function openStoreEarly(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): void {
  const dataDir = earlyDataDir(argv, env)
  if (dataDir !== undefined) openPgliteSqlEarly(dataDir)
}

function earlyDataDir(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (argv.length > 1 || (argv[0] ?? 'serve') !== 'serve') return undefined
  const set = setVariables(env)
  if (set['DATABASE_URL'] !== undefined) return undefined
  const dataDir = dataDirOf(set['SWAPEAZI_DATA_DIR'] ?? DEFAULT_DATA_DIR)
  return dataDir.startsWith('memory://') ? undefined : dataDir
}
