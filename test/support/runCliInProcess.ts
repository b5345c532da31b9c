import { PassThrough, Writable } from 'node:stream'
import { runCli } from '../../src/cli/runCli.ts'
import { migratedPgliteTemplate } from './pgliteTemplate.ts'

export type CliRun = { code: number; stdout: string; stderr: string }

/** A stream that keeps what is written to it, as text. */
export class TextSink extends Writable {
  text = ''

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += typeof chunk === 'string' ? chunk : chunk.toString('utf8')
    done()
  }
}

/**
 * `swapeazi ARGV...` run in this process (src/cli/runCli.ts) with exactly `env` as its environment, stdin closed:
 * the exit code and what it wrote. An embedded store it creates starts from the run's migrated template. The binary
 * itself is spawned once, in test/cli/bin.test.ts.
 */
export async function runCliInProcess(argv: readonly string[], env: Record<string, string>): Promise<CliRun> {
  const stdin = new PassThrough()
  stdin.end()
  const stdout = new TextSink()
  const stderr = new TextSink()
  const code = await runCli(argv, { env, stdin, stdout, stderr, pgliteTemplate: await migratedPgliteTemplate() })
  return { code, stdout: stdout.text, stderr: stderr.text }
}
