// `npm run demo`: the agent flow of scripts/agentDemo.ts, printed to stdout; exits 1 with the reason on any failure.
import { runAgentDemo } from './agentDemo.ts'

runAgentDemo((line = '') => {
  process.stdout.write(`${line}\n`)
}).then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`)
    process.exit(1)
  },
)
