// `npm run contracts`: recompiles the router and rewrites its committed artifact.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { compileRouter, renderRouterArtifact } from './compileRouter.ts'

const target = fileURLToPath(new URL('./routerArtifact.ts', import.meta.url))
writeFileSync(target, renderRouterArtifact(compileRouter()))
process.stderr.write(`wrote ${target}\n`)
