import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  type Address,
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  getAddress,
  type Hex,
  isAddressEqual,
  keccak256,
  numberToHex,
  toHex,
  zeroAddress,
  zeroHash,
} from 'viem'
import { Abis, Transaction } from 'viem/tempo'

/**
 * A Tempo JSON-RPC node in miniature, for tests: what the mppx client needs to pay in push mode (build, sign and
 * send a Tempo 0x76 transaction with `eth_sendRawTransactionSync`) and what our server needs to verify it
 * (`eth_getTransactionReceipt`), over real HTTP on loopback. It keeps TIP-20 balances of one token (pathUSD), applies
 * `transfer` and `transferWithMemo` calls of a signed transaction (the sender recovered from its signature), and
 * emits the logs a TIP-20 emits (Transfer, then TransferWithMemo for a memo transfer).
 *
 * Why not anvil: anvil 1.7.1 `--network tempo` has pathUSD at genesis, but it never mines the transaction mppx 0.11's
 * client sends (an expiring-nonce 0x76 transaction: `eth_sendRawTransactionSync` times out and the pool is empty), so
 * mppx's client cannot pay it. Everything else (fees, gas, blocks) is answered with fixed plausible values.
 */
export type TempoRpcStandIn = {
  url: string
  chainId: number
  /** Gives `address` this many atomic units of the token. */
  fund(address: Address, amountAtomic: bigint): void
  balanceOf(address: Address): bigint
  /** The methods called, in order (a test can check the server only read). */
  readonly calls: string[]
  /** Makes every call fail with HTTP 503 until called again with false (the RPC unreachable). */
  setDown(isDown: boolean): void
  close(): Promise<void>
}

type Receipt = Record<string, unknown>

export type StartTempoRpcStandInOptions = { chainId: number; token: Address }

export async function startTempoRpcStandIn(options: StartTempoRpcStandInOptions): Promise<TempoRpcStandIn> {
  const { chainId, token } = options
  const balances = new Map<string, bigint>()
  const receipts = new Map<string, Receipt>()
  const calls: string[] = []
  let blockNumber = 1n
  let isDown = false

  const balanceOf = (address: Address): bigint => balances.get(address.toLowerCase()) ?? 0n

  /** When each block that holds a transaction was made: a block asked for by number keeps its time. */
  const blockTimes = new Map<bigint, number>()
  const block = (number = blockNumber): Record<string, unknown> => ({
    number: numberToHex(number),
    hash: keccak256(toHex(`block ${number}`)),
    parentHash: zeroHash,
    timestamp: numberToHex(blockTimes.get(number) ?? Math.floor(Date.now() / 1000)),
    nonce: '0x0000000000000000',
    sha3Uncles: zeroHash,
    logsBloom: `0x${'00'.repeat(256)}`,
    transactionsRoot: zeroHash,
    stateRoot: zeroHash,
    receiptsRoot: zeroHash,
    miner: zeroAddress,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: '0x100',
    gasLimit: '0x1c9c380',
    gasUsed: '0x0',
    baseFeePerGas: '0x2540be400',
    transactions: [],
    uncles: [],
  })

  const log = (eventName: 'Transfer' | 'TransferWithMemo', args: Record<string, unknown>, data: Hex, index: number, hash: Hex) => ({
    address: token,
    topics: encodeEventTopics({ abi: Abis.tip20, eventName, args } as Parameters<typeof encodeEventTopics>[0]),
    data,
    blockNumber: numberToHex(blockNumber),
    blockHash: keccak256(toHex(`block ${blockNumber}`)),
    transactionHash: hash,
    transactionIndex: '0x0',
    logIndex: numberToHex(index),
    removed: false,
  })

  /** Applies a signed transaction's token transfers (all or none, as one transaction) and keeps its receipt. */
  const execute = (serialized: Hex): Receipt => {
    const transaction = Transaction.deserialize(serialized as Transaction.TransactionSerializedTempo)
    const from = transaction.from
    if (from === undefined) throw new RpcError(-32000, 'transaction is not signed')
    const hash = keccak256(serialized)
    const known = receipts.get(hash)
    if (known !== undefined) throw new RpcError(-32000, 'already known')
    const logs: ReturnType<typeof log>[] = []
    const debits = new Map<string, bigint>()
    let isReverted = false
    for (const call of transaction.calls ?? []) {
      if (call.to === undefined || call.to === null || !isAddressEqual(call.to, token) || call.data === undefined) continue
      const decoded = decodeFunctionData({ abi: Abis.tip20, data: call.data })
      if (decoded.functionName !== 'transfer' && decoded.functionName !== 'transferWithMemo') continue
      const [to, amount, memo] = decoded.args as readonly [Address, bigint, Hex?]
      const spent = (debits.get(from.toLowerCase()) ?? 0n) + amount
      if (spent > balanceOf(from)) {
        isReverted = true
        break
      }
      debits.set(from.toLowerCase(), spent)
      debits.set(to.toLowerCase(), (debits.get(to.toLowerCase()) ?? 0n) - amount)
      const data = encodeAbiParameters([{ type: 'uint256' }], [amount])
      logs.push(log('Transfer', { from, to }, data, logs.length, hash))
      if (memo !== undefined) logs.push(log('TransferWithMemo', { from, to, memo }, data, logs.length, hash))
    }
    if (!isReverted) for (const [address, debit] of debits) balances.set(address, (balances.get(address) ?? 0n) - debit)
    blockNumber += 1n
    blockTimes.set(blockNumber, Math.floor(Date.now() / 1000))
    const receipt: Receipt = {
      transactionHash: hash,
      transactionIndex: '0x0',
      blockHash: keccak256(toHex(`block ${blockNumber}`)),
      blockNumber: numberToHex(blockNumber),
      from: getAddress(from),
      to: token,
      cumulativeGasUsed: '0x10000',
      gasUsed: '0x10000',
      effectiveGasPrice: '0x2540be400',
      contractAddress: null,
      logs: isReverted ? [] : logs,
      logsBloom: `0x${'00'.repeat(256)}`,
      status: isReverted ? '0x0' : '0x1',
      type: '0x76',
    }
    receipts.set(hash, receipt)
    return receipt
  }

  const answer = (method: string, params: readonly unknown[]): unknown => {
    switch (method) {
      case 'eth_chainId':
        return numberToHex(chainId)
      case 'eth_blockNumber':
        return numberToHex(blockNumber)
      case 'eth_getBlockByNumber':
        return typeof params[0] === 'string' && params[0].startsWith('0x') ? block(BigInt(params[0])) : block()
      case 'eth_gasPrice':
        return '0x2540be400'
      case 'eth_maxPriorityFeePerGas':
        return '0x0'
      case 'eth_estimateGas':
        return '0x30000'
      case 'eth_getTransactionCount':
        return '0x0'
      case 'eth_sendRawTransactionSync':
        return execute(params[0] as Hex)
      case 'eth_sendRawTransaction':
        return execute(params[0] as Hex)['transactionHash']
      case 'eth_getTransactionReceipt':
        return receipts.get(String(params[0]).toLowerCase() as Hex) ?? null
      default:
        // eth_fillTransaction among others: viem falls back to filling the transaction itself.
        throw new RpcError(-32601, `the method ${method} does not exist/is not available`)
    }
  }

  const server = createServer(async (request, response) => {
    const body = await readBody(request)
    if (isDown) {
      response.writeHead(503).end()
      return
    }
    const one = (message: { id?: unknown; method?: unknown; params?: unknown }): unknown => {
      const method = String(message.method)
      calls.push(method)
      try {
        return { jsonrpc: '2.0', id: message.id ?? null, result: answer(method, Array.isArray(message.params) ? message.params : []) }
      } catch (error) {
        const { code, message: text } = error instanceof RpcError ? error : { code: -32603, message: String(error) }
        return { jsonrpc: '2.0', id: message.id ?? null, error: { code, message: text } }
      }
    }
    const parsed = JSON.parse(body) as unknown
    const reply = Array.isArray(parsed) ? parsed.map(one) : one(parsed as Record<string, unknown>)
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    chainId,
    fund: (address, amountAtomic) => balances.set(address.toLowerCase(), balanceOf(address) + amountAtomic),
    balanceOf,
    calls,
    setDown: (down) => {
      isDown = down
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
