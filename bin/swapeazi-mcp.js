#!/usr/bin/env node
// `swapeazi mcp`: the MCP server over stdio. Runs the TypeScript CLI through tsx, so the package needs no build step.
import { register } from 'tsx/esm/api'

register()
process.argv.splice(2, 0, 'mcp')
await import('../src/cli/main.ts')
