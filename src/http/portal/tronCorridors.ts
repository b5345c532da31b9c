/**
 * The corridors that touch a token of the Tron chain (USDT-TRC20 today), found from the manifest's TRX chain entry
 * rather than a hard-coded symbol, so a new TRC-20 token's corridors are listed with no code change.
 */
export function tronCorridors<T extends { from: string; to: string }>(
  corridors: readonly T[],
  chains: readonly { id: string; tokens: readonly string[] }[],
): T[] {
  const tronTokens = new Set(chains.filter((chain) => chain.id === 'TRX').flatMap((chain) => chain.tokens))
  return corridors.filter((row) => tronTokens.has(row.from) || tronTokens.has(row.to))
}
