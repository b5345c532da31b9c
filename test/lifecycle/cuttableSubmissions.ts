import type { SubmissionStore } from '../../src/store/createSubmissionStore.ts'

/**
 * A process's view of the kept submissions that can be cut, as `kill -9` cuts it: reads and writes go to the store
 * until `cut()`, and nothing after (the process is gone; what it wrote stays).
 */
export function cuttableSubmissions(store: SubmissionStore): SubmissionStore & { cut(): void } {
  let isCut = false
  return {
    list: (sender) => (isCut ? new Promise<never>(() => {}) : store.list(sender)),
    put: async (sender, submission) => {
      if (!isCut) await store.put(sender, submission)
    },
    remove: async (sender, nonces) => {
      if (!isCut) await store.remove(sender, nonces)
    },
    cut() {
      isCut = true
    },
  }
}
