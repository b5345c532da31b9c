import type { ChildProcess } from 'node:child_process'

/** Live children of this test process (anvil nodes, servers), killed on exit so a crashed test leaks none. */
const running = new Set<ChildProcess>()
let exitHookInstalled = false

export type TrackedChildProcess = {
  /** Resolves once the child is gone (or could not be spawned at all). */
  exited: Promise<void>
  /** SIGTERM, then SIGKILL after `stopTimeoutMs`; resolves once the child is gone. Idempotent. */
  stop(): Promise<void>
}

/** Registers a spawned child for kill-on-exit and gives it one idempotent, escalating `stop`. */
export function trackChildProcess(child: ChildProcess, stopTimeoutMs: number): TrackedChildProcess {
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const each of running) each.kill('SIGKILL')
    })
  }
  running.add(child)
  const exited = new Promise<void>((resolve) => {
    const gone = (): void => {
      running.delete(child)
      resolve()
    }
    child.once('exit', gone)
    // A binary that could not be spawned at all emits 'error' and never 'exit'.
    child.once('error', () => {
      if (child.pid === undefined) gone()
    })
  })
  let stopping: Promise<void> | undefined
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), stopTimeoutMs)
        await exited
        clearTimeout(timer)
      }
    })()
    return stopping
  }
  return { exited, stop }
}
