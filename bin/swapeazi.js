#!/usr/bin/env node
// Runs the CLI compiled ahead of time (scripts/compiledCli.js: built first whenever a source changed, so never stale).
// When the build cannot be written (a read-only install), runs the TypeScript sources through tsx instead.
import { runCompiledCli } from '../scripts/runCompiledCli.js'

await runCompiledCli()
