import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { migrate } from '../../src/store/migrations.ts'
import { dumpPgliteTemplate } from '../../src/store/pgliteDatabase.ts'
import { compileTestContracts } from '../chain/testContracts.ts'

/**
 * Once per `vitest run`, before any test file: the work every file would otherwise repeat.
 * - A migrated PGlite, dumped under the OS temp dir; in-memory stores clone it (test/support/pgliteTemplate.ts).
 * - The Solidity test contracts compiled into the content-keyed cache test/chain/testContracts.ts reads.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'swapeazi-vitest-'))
  const templatePath = join(dir, 'pglite-template.tar')
  await writeFile(templatePath, new Uint8Array(await (await dumpPgliteTemplate(migrate)).arrayBuffer()))
  project.provide('pgliteTemplatePath', templatePath)
  compileTestContracts()
  return () => rm(dir, { recursive: true, force: true })
}
