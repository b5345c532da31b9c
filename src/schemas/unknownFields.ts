/**
 * Names a caller is likely to send for one of our fields (lowercase, separators removed), to the field meant. A
 * body that silently drops `recipient` builds to the sender: every unknown field is refused, and these say which
 * field was meant.
 */
const LIKELY_MEANT: Readonly<Record<string, readonly string[]>> = {
  toAddress: ['recipient', 'recipientaddress', 'receiver', 'receiveraddress', 'to', 'destinationaddress', 'destination', 'payee'],
  address: ['recipient', 'recipientaddress', 'receiver', 'toaddress', 'to', 'wallet'],
  fromAddress: ['sender', 'senderaddress', 'from', 'wallet', 'walletaddress', 'owner', 'payer'],
  fromAmount: ['amount', 'amountin', 'value', 'fromamountatomic'],
  amount: ['fromamount', 'value', 'amountin'],
  fromChain: ['sourcechain', 'srcchain', 'chain', 'fromnetwork', 'network', 'chainid'],
  toChain: ['destinationchain', 'dstchain', 'destchain', 'tonetwork'],
  fromToken: ['sourcetoken', 'srctoken', 'token', 'tokenin', 'fromsymbol'],
  toToken: ['destinationtoken', 'dsttoken', 'tokenout', 'tosymbol'],
  slippage: ['slippagetolerance', 'maxslippage', 'slippagebps', 'slippagepercent'],
  recipients: ['recipient', 'payees', 'transfers', 'items'],
}

export type UnknownFieldsParameters = {
  /** The fields the body takes, in the order the message lists them. */
  known: readonly string[]
  /** What to say of a field that belongs to another request (quoteId on a quote's body), by its exact name. */
  elsewhere?: Readonly<Record<string, string>>
  /** What has the unknown fields, as the message starts: "has" after a field name ("(body) has"), or "the arguments have". */
  lead?: string
}

/**
 * The error option of a strict object: an unknown field is refused naming it, with the field it probably meant
 * (another case, a likely synonym, a typo one or two letters off) and the fields the body takes; zod's own message
 * for any other issue.
 */
export function unknownFieldsError(parameters: UnknownFieldsParameters): (issue: { code?: string; keys?: string[] }) => string | undefined {
  return (issue) => {
    if (issue.code !== 'unrecognized_keys' || issue.keys === undefined) return undefined
    const named = issue.keys.map((key) => {
      // Own entries only: a field named __proto__ or constructor must not read the object's prototype.
      const elsewhere =
        parameters.elsewhere !== undefined && Object.hasOwn(parameters.elsewhere, key) ? parameters.elsewhere[key] : undefined
      const hint = elsewhere ?? meantBy(key, parameters.known)
      return hint === undefined ? `"${key}"` : `"${key}" (${hint})`
    })
    return `${parameters.lead ?? 'has'} ${named.length === 1 ? 'an unknown field' : 'unknown fields'} ${named.join(', ')}: unknown fields are refused, not ignored; send only ${parameters.known.join(', ')}`
  }
}

/** The known field `key` probably stands for, as advice; undefined when none is close. */
function meantBy(key: string, known: readonly string[]): string | undefined {
  const folded = fold(key)
  const exact = known.find((field) => fold(field) === folded)
  if (exact !== undefined) return `field names are case-sensitive: did you mean ${exact}?`
  const synonym = known.find((field) => LIKELY_MEANT[field]?.includes(folded) === true)
  if (synonym !== undefined) return `did you mean ${synonym}?`
  if (folded.length < 4) return undefined
  const typo = known.find((field) => editDistance(fold(field), folded) <= 2)
  return typo === undefined ? undefined : `did you mean ${typo}?`
}

/** Lowercase, without the separators naming styles add (`to_address`, `to-address`). */
function fold(name: string): string {
  return name.toLowerCase().replace(/[_\-\s]/g, '')
}

/** Levenshtein distance; field names are short, so the quadratic table costs nothing. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}
