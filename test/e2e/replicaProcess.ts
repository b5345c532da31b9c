import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { trackChildProcess } from '../support/trackChildProcess.ts'

/** The repository root: the server runs from there, as `npm start` does. */
const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
const START_TIMEOUT_MS = 90_000
const STOP_TIMEOUT_MS = 10_000
const KEPT_LOG_CHARS = 20_000

export type Replica = {
  /** `http://host:port` from the server's `listening` log line. */
  url: string
  pid: number
  /** The last of its stderr (pino JSON lines), for failure messages. */
  log(): string
  /** SIGTERM, then SIGKILL after 10 s; resolves once the process is gone. Idempotent. */
  stop(): Promise<void>
}

export type StartReplicaOptions = {
  /** The server's environment, on top of PATH and HOME; nothing else of the test's environment is passed on. */
  env: Record<string, string>
  timeoutMs?: number
}

/**
 * Starts `swapeazi serve` as its own process (`node bin/swapeazi.js serve`, the compiled CLI `npm start` runs, with no npm
 * in between, so the pid is the server's) and resolves with its URL once it logs `event: 'listening'`. Pass SWAPEAZI_PORT=0 for an OS-chosen
 * port. Rejects, after killing it, if it exits or stays silent past the timeout.
 */
export async function startReplica(options: StartReplicaOptions): Promise<Replica> {
  const timeoutMs = options.timeoutMs ?? START_TIMEOUT_MS
  const env: Record<string, string> = { SWAPEAZI_LOG_LEVEL: 'info', ...options.env }
  for (const name of ['PATH', 'HOME', 'TMPDIR']) {
    const value = process.env[name]
    if (value !== undefined && env[name] === undefined) env[name] = value
  }
  const child = spawn(process.execPath, ['bin/swapeazi.js', 'serve'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { stop } = trackChildProcess(child, STOP_TIMEOUT_MS)
  let log = ''

  // stdout is drained too: a full pipe would block the server.
  child.stdout?.resume()
  const { stderr } = child
  if (stderr === null) throw new Error('the server has no stderr pipe')
  const lines = createInterface({ input: stderr })
  const stderrClosed = new Promise<void>((resolve) => lines.once('close', resolve))
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the server did not log 'listening' within ${timeoutMs / 1000} s`)), timeoutMs)
      lines.on('line', (line) => {
        log = `${log}${line}\n`.slice(-KEPT_LOG_CHARS)
        let entry: unknown
        try {
          entry = JSON.parse(line)
        } catch {
          return
        }
        if (
          typeof entry === 'object' &&
          entry !== null &&
          'event' in entry &&
          entry.event === 'listening' &&
          'url' in entry &&
          typeof entry.url === 'string'
        ) {
          clearTimeout(timer)
          resolve(entry.url)
        }
      })
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`the server could not be started: ${error.message}`))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        // Its last words (the reason it stopped) are still in the pipe when 'exit' fires.
        void stderrClosed.then(() => reject(new Error(`the server exited before listening (code ${code}, signal ${signal})`)))
      })
    })
    return { url, pid: child.pid ?? -1, log: () => log, stop }
  } catch (error) {
    await stop()
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n--- server stderr ---\n${log}`, { cause: error })
  }
}
