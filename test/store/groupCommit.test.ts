import { describe, expect, it } from 'vitest'
import { createGroupCommit } from '../../src/store/groupCommit.ts'

/** A writer that records each statement's items and takes a turn of the event loop, as a database round trip does. */
function recordingWriter(failOn: (item: number) => boolean = () => false) {
  const statements: number[][] = []
  const write = async (items: readonly number[]): Promise<void> => {
    await new Promise((resolve) => setTimeout(resolve, 5))
    statements.push([...items])
    const bad = items.find(failOn)
    if (bad !== undefined) throw new Error(`item ${bad} refused`)
  }
  return { statements, write }
}

/** Calls `record` with 1, then, while 1's statement is in flight, with 2, 3 and 4. */
async function oneThenThreeDuringItsWrite(record: (item: number) => Promise<void>): Promise<PromiseSettledResult<void>[]> {
  const first = record(1)
  await new Promise((resolve) => setTimeout(resolve, 1))
  return Promise.allSettled([first, ...[2, 3, 4].map((n) => record(n))])
}

describe('createGroupCommit', () => {
  it('writes calls made in the same turn of the event loop in one statement', async () => {
    const writer = recordingWriter()
    const record = createGroupCommit(writer.write)
    const done: number[] = []
    await Promise.all([1, 2, 3, 4].map((n) => record(n).then(() => done.push(n))))
    expect(writer.statements).toEqual([[1, 2, 3, 4]])
    expect(done.sort()).toEqual([1, 2, 3, 4])
  })

  it('writes calls that arrive during a write together in the next statement', async () => {
    const writer = recordingWriter()
    const record = createGroupCommit(writer.write)
    const outcomes = await oneThenThreeDuringItsWrite(record)
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
    expect(writer.statements).toEqual([[1], [2, 3, 4]])
  })

  it('starts a statement only after the I/O phase in which its first call was made', async () => {
    const writer = recordingWriter()
    const record = createGroupCommit(writer.write)
    const written = record(1)
    // Requests read in the same phase as the first call join its statement (PGlite runs statements in this thread).
    await Promise.resolve()
    expect(writer.statements).toEqual([])
    const second = record(2)
    await Promise.all([written, second])
    expect(writer.statements).toEqual([[1, 2]])
  })

  it('resolves a call only after the statement holding its item has finished', async () => {
    const writer = recordingWriter()
    const record = createGroupCommit(writer.write)
    await record(7)
    expect(writer.statements).toEqual([[7]])
  })

  it('when a group fails, writes its items one by one so only the item at fault fails', async () => {
    const writer = recordingWriter((item) => item === 3)
    const record = createGroupCommit(writer.write)
    const outcomes = await oneThenThreeDuringItsWrite(record)
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled'])
    expect(String((outcomes[2] as PromiseRejectedResult).reason)).toMatch(/item 3 refused/)
    expect(writer.statements).toEqual([[1], [2, 3, 4], [2], [3], [4]])
  })

  it('keeps working after a failure', async () => {
    const writer = recordingWriter((item) => item === 1)
    const record = createGroupCommit(writer.write)
    await expect(record(1)).rejects.toThrow(/item 1 refused/)
    await record(2)
    expect(writer.statements).toEqual([[1], [2]])
  })
})
