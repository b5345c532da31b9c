import { connect } from 'node:net'
import { PassThrough } from 'node:stream'
import { setTimeout as sleep } from 'node:timers/promises'
import { expect } from 'vitest'
import { runCli } from '../../src/cli/runCli.ts'
import { agentTextOffences } from './agentText.ts'
import { migratedPgliteTemplate } from './pgliteTemplate.ts'
import { TextSink } from './runCliInProcess.ts'

export type Served = { port: number; stderr: TextSink; stop(): Promise<number> }

/** `swapeazi serve` in this process, on an ephemeral port, until `stop` ends it as SIGTERM would. */
export async function serveInProcess(env: Record<string, string>): Promise<Served> {
  const stdin = new PassThrough()
  stdin.end()
  const stderr = new TextSink()
  const stop = new AbortController()
  const exited = runCli(['serve'], {
    env,
    stdin,
    stdout: new TextSink(),
    stderr,
    stop: stop.signal,
    pgliteTemplate: await migratedPgliteTemplate(),
  })
  for (let waited = 0; waited < 60_000; waited += 20) {
    const listening = /"event":"listening","url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(stderr.text)
    if (listening?.[1] !== undefined) {
      const port = Number(listening[1])
      return {
        port,
        stderr,
        stop: () => {
          stop.abort()
          return exited
        },
      }
    }
    const code = await Promise.race([exited, sleep(20, undefined)])
    if (code !== undefined) throw new Error(`serve exited with ${code} before listening:\n${stderr.text}`)
  }
  throw new Error(`serve did not listen within 60 s:\n${stderr.text}`)
}

/** Writes `text` on a raw connection and never more; resolves with what came back and when the server closed it. */
export function sendAndWait(port: number, text: string): Promise<{ answer: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    let answer = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => {
      answer += chunk
    })
    socket.on('error', reject)
    socket.on('close', () => resolve({ answer, closedAfterMs: Date.now() - started }))
  })
}

/**
 * A raw answer is a problem with its stable code, closed after it, with the headers every answer carries (review of
 * issue 15: what Node's parser and timeouts refused used to get a bare status line).
 */
export function expectProblem(answer: string, status: number, code: string): void {
  const [head = '', body = ''] = answer.split('\r\n\r\n')
  expect(head).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
  const headers = head.toLowerCase()
  expect(headers).toContain('content-type: application/problem+json')
  expect(headers).toContain('x-content-type-options: nosniff')
  expect(headers).toContain('cache-control: no-store')
  expect(headers).toContain('connection: close')
  const requestId = /x-request-id: ([0-9a-f-]{36})/.exec(headers)?.[1]
  expect(requestId).toBeDefined()
  const problem = JSON.parse(body) as { status: number; code: string; detail: string; requestId: string }
  expect(problem).toMatchObject({ status, code, requestId })
  expect(agentTextOffences(problem.detail)).toEqual([])
}
