// Start-up time (issue 15 item 10): `npm start` until GET /api/v1/health first answers 200, on a warm data directory
// (the embedded store already created and migrated by an untimed start), median of 5, beside a bare node:http
// server's start measured the same way. Also `node bin/swapeazi.js serve` without npm in front, the TypeScript
// sources through tsx (how `npm start` ran before the CLI was compiled ahead of time), and one build of the compiled
// CLI. Each start is a process of its own; they alternate, so a busy moment of the shared machine falls on all of them.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { compiledCli } from '../scripts/compiledCli.js'
import { closedPort } from '../test/support/closedPort.ts'

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))
const ROUNDS = 5
const POLL_MS = 5
const START_TIMEOUT_MS = 60_000
/** Linux's clock ticks per second, the unit of /proc/PID/stat's CPU times. */
const CLOCK_TICKS_PER_SEC = 100

const BARE_SERVER = `
import { createServer } from 'node:http'
createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"ok":true}') })
  .listen(Number(process.env.PORT), '127.0.0.1')
`

/** `isCompiled`: runs the compiled CLI, whose build is brought up to date (untimed) before each start. */
type Way = { name: string; command: string; args: string[]; isCompiled: boolean }

const NPM_START = 'npm start'
const WAYS: readonly Way[] = [
  { name: 'bare node:http', command: process.execPath, args: ['--input-type=module', '-e', BARE_SERVER], isCompiled: false },
  { name: NPM_START, command: 'npm', args: ['start', '--silent'], isCompiled: true },
  { name: 'node bin/swapeazi.js serve', command: process.execPath, args: ['bin/swapeazi.js', 'serve'], isCompiled: true },
  {
    name: 'tsx src/cli/main.ts serve',
    command: process.execPath,
    args: ['--import', 'tsx', 'src/cli/main.ts', 'serve'],
    isCompiled: false,
  },
]

export type StartupResult = {
  rounds: number
  /** Per way, every start in ms, in the order run. */
  startsMs: Record<string, number[]>
  medianMs: Record<string, number>
  /**
   * Per way run by node directly, the median CPU time (user + system) the process had used by its first 200: what the
   * start costs whatever else the machine was doing. Not known for npm start, whose server is a grandchild.
   */
  cpuMedianMs: Record<string, number>
  /** One build of the compiled CLI into a scratch directory (what the first start after a source change adds). */
  buildMs: number
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

/** Ends a start and everything it spawned (npm runs node under a shell): the process group. */
async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  process.kill(-child.pid, 'SIGTERM')
  const timer = setTimeout(() => child.pid !== undefined && process.kill(-child.pid, 'SIGKILL'), 10_000)
  await exited
  // npm may exit before the node process it started has closed its store and released the data directory: the next
  // start would find it held. Wait for the whole group.
  for (;;) {
    try {
      process.kill(-child.pid, 0)
    } catch {
      break
    }
    await sleep(POLL_MS)
  }
  clearTimeout(timer)
}

/** The CPU time (user + system) process `pid` has used, in ms; undefined when it cannot be read. */
async function cpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1_000) / CLOCK_TICKS_PER_SEC
  } catch {
    return undefined
  }
}

/** Milliseconds from spawning `way` to the first 200 of GET /api/v1/health, and the CPU the process had used by then. */
async function timeStart(way: Way, dataDir: string): Promise<{ ms: number; cpuMs: number | undefined }> {
  if (way.isCompiled) await compiledCli()
  const port = await closedPort()
  const env = {
    ...process.env,
    PORT: String(port),
    SWAPEAZI_HOST: '127.0.0.1',
    SWAPEAZI_PORT: String(port),
    SWAPEAZI_DATA_DIR: dataDir,
    SWAPEAZI_LOG_LEVEL: 'warn',
    SWAPEAZI_PAY_TO: '0x2222222222222222222222222222222222222222',
    SWAPEAZI_ROUTER_ADDRESS: '0x239CdA85d5486f3EC101538b4b7A925113C15045',
  }
  const started = performance.now()
  const child = spawn(way.command, way.args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'], detached: true })
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = `${stderr}${chunk.toString('utf8')}`.slice(-4_000)
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${way.name} exited with ${child.exitCode} before answering:\n${stderr}`)
      if (performance.now() - started > START_TIMEOUT_MS) throw new Error(`${way.name} did not answer within 60 s:\n${stderr}`)
      try {
        const response = await fetch(`http://127.0.0.1:${port}/api/v1/health`)
        await response.arrayBuffer()
        if (response.status === 200) {
          const ms = performance.now() - started
          const isNodeItself = way.command === process.execPath && child.pid !== undefined
          return { ms, cpuMs: isNodeItself && child.pid !== undefined ? await cpuMs(child.pid) : undefined }
        }
      } catch {
        // Not listening yet.
      }
      await sleep(POLL_MS)
    }
  } finally {
    await stopGroup(child)
  }
}

/**
 * Runs the start-up section: an untimed start warms the data directory, then 5 rounds. The compiled CLI is brought up
 * to date before each of its starts, untimed: on a shared machine other sessions edit src/, and the start that
 * rebuilds is measured separately, as the build.
 */
export async function runStartup(): Promise<StartupResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'swapeazi-bench-start-'))
  const scratch = await mkdtemp(join(tmpdir(), 'swapeazi-bench-build-'))
  try {
    const npmStart = WAYS.find((way) => way.name === NPM_START)
    if (npmStart === undefined) throw new Error('no npm start')
    await timeStart(npmStart, dataDir)
    const startsMs: Record<string, number[]> = Object.fromEntries(WAYS.map((way) => [way.name, []]))
    const cpusMs: Record<string, number[]> = {}
    for (let round = 0; round < ROUNDS; round += 1)
      for (const way of WAYS) {
        const start = await timeStart(way, dataDir)
        startsMs[way.name]?.push(start.ms)
        if (start.cpuMs !== undefined) (cpusMs[way.name] ??= []).push(start.cpuMs)
      }
    // Into a scratch directory, so the build in dist/ stays as it is.
    const buildStarted = performance.now()
    await compiledCli({ outDir: scratch })
    const buildMs = performance.now() - buildStarted
    const medianOf = (table: Record<string, number[]>): Record<string, number> =>
      Object.fromEntries(Object.entries(table).map(([name, values]) => [name, median(values)]))
    return { rounds: ROUNDS, startsMs, medianMs: medianOf(startsMs), cpuMedianMs: medianOf(cpusMs), buildMs }
  } finally {
    await rm(dataDir, { recursive: true, force: true })
    await rm(scratch, { recursive: true, force: true })
  }
}
