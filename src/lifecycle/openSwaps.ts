import type { ChainCode } from '../schemas/catalogue.ts'
import type { TrackedSwap } from '../store/createStore.ts'
import type { TrackerContext } from './trackerContext.ts'

const PAGE = 500

/** Every swap still built or pending whose source is one of `chains`, read page by page. */
export async function openSwaps(context: TrackerContext, chains: readonly ChainCode[]): Promise<TrackedSwap[]> {
  const all: TrackedSwap[] = []
  let afterRef: string | undefined
  for (;;) {
    const page = await context.store.lifecycle.listOpen({ chains, limit: PAGE, ...(afterRef === undefined ? {} : { afterRef }) })
    all.push(...page)
    if (page.length < PAGE) return all
    afterRef = page.at(-1)?.swap.ref
  }
}
