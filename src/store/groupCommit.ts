/** Most rows one grouped statement carries. */
const MAX_GROUP = 64

/**
 * Group commit: `write(items)` runs one statement for many items. A call made while a statement is in flight waits
 * for it and is then written together with every other call that arrived meanwhile, so concurrent writers share one
 * round trip. The first statement starts only after the event loop's current I/O phase (setImmediate), so every
 * request already read in that phase joins it: PGlite runs each statement in the event loop's own thread, so nothing
 * can arrive while one is in flight, and a statement started at the first call would carry that call alone. Each
 * call still resolves only once its own item is committed, so nothing is answered before it is stored. When a group
 * fails, its items are written one by one, so only the item at fault fails, with its own error.
 */
export function createGroupCommit<T>(write: (items: readonly T[]) => Promise<void>): (item: T) => Promise<void> {
  type Waiting = { item: T; resolve: () => void; reject: (error: unknown) => void }
  let queue: Waiting[] = []
  let isFlushing = false

  const settle = async (group: Waiting[]): Promise<void> => {
    try {
      await write(group.map((waiting) => waiting.item))
      for (const waiting of group) waiting.resolve()
    } catch (error) {
      if (group.length === 1) group[0]?.reject(error)
      else for (const waiting of group) await write([waiting.item]).then(waiting.resolve, waiting.reject)
    }
  }

  const flush = async (): Promise<void> => {
    while (queue.length > 0) {
      const group = queue.slice(0, MAX_GROUP)
      queue = queue.slice(group.length)
      await settle(group)
    }
    isFlushing = false
  }

  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject })
      if (isFlushing) return
      isFlushing = true
      setImmediate(() => void flush())
    })
}
