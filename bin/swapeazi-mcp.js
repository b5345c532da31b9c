#!/usr/bin/env node
// `swapeazi mcp`: the MCP server over stdio, from the CLI compiled ahead of time (see bin/swapeazi.js).
import { runCompiledCli } from '../scripts/runCompiledCli.js'

process.argv.splice(2, 0, 'mcp')
await runCompiledCli()
