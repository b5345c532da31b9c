import { readFile } from 'node:fs/promises'
import { inject } from 'vitest'
import { migrate } from '../../src/store/migrations.ts'
import { dumpPgliteTemplate } from '../../src/store/pgliteDatabase.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    /** The migrated PGlite data directory test/support/globalSetup.ts dumped for this run. */
    pgliteTemplatePath: string
  }
}

let template: Promise<Blob> | undefined

/**
 * A migrated PGlite data directory that a new in-memory store clones (openPgliteSql's `template`) in well under a
 * second, where initdb and the migrations take seconds: made once per run by test/support/globalSetup.ts, read once
 * per test file. Under a config without that setup (the browser tests), made here, once per file.
 */
export function migratedPgliteTemplate(): Promise<Blob> {
  template ??= (async () => {
    const path = inject('pgliteTemplatePath')
    return path === undefined ? dumpPgliteTemplate(migrate) : new Blob([await readFile(path)])
  })()
  return template
}
