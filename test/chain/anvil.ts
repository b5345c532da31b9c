import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import {
  type Abi,
  type Address,
  type Chain,
  type Hex,
  type PrivateKeyAccount,
  type PublicClient,
  type TestClient,
  type TransactionReceipt,
  type Transport,
  type WalletClient,
  createPublicClient,
  createTestClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  toHex,
} from 'viem'
import { mnemonicToAccount, privateKeyToAccount } from 'viem/accounts'
import { trackChildProcess } from '../support/trackChildProcess.ts'

/** The mnemonic anvil derives its funded dev accounts from unless told otherwise. */
export const ANVIL_MNEMONIC = 'test test test test test test test test test test test junk'
/** Arachnid's deterministic CREATE2 deployer: calldata = salt (32 bytes) ‖ init code, returns the 20-byte address. */
export const DETERMINISTIC_DEPLOYER: Address = '0x4e59b44847b379578588920cA78FbF26c0B4956C'
/** Its well-known runtime bytecode. */
export const DETERMINISTIC_DEPLOYER_CODE: Hex =
  '0x7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffe03601600081602082378035828234f58015156039578182fd5b8082525050506014600cf3'

const START_TIMEOUT_MS = 30_000
const STOP_TIMEOUT_MS = 5_000
const ACCOUNT_COUNT = 10

export type AnvilInstance = {
  rpcUrl: string
  chainId: number
  chain: Chain
  publicClient: PublicClient<Transport, Chain>
  testClient: TestClient<'anvil', Transport, Chain>
  /** anvil's first ten dev accounts (each funded with 10 000 ETH). */
  accounts: PrivateKeyAccount[]
  walletClient(account: PrivateKeyAccount): WalletClient<Transport, Chain, PrivateKeyAccount>
  /** Kills the node and waits for it to exit; idempotent. */
  stop(): Promise<void>
}

export type StartAnvilOptions = {
  /** Default 31337. */
  chainId?: number
}

/**
 * The anvil binary of `@foundry-rs/anvil`'s platform package, resolved directly: that package's postinstall (which
 * would link it) is not run here, as npm is configured to skip install scripts.
 */
export function anvilBinaryPath(): string {
  const os = ({ linux: 'linux', darwin: 'darwin' } as Partial<Record<NodeJS.Platform, string>>)[process.platform]
  const arch = ({ x64: 'amd64', arm64: 'arm64' } as Partial<Record<string, string>>)[process.arch]
  if (!os || !arch) throw new Error(`anvil: no @foundry-rs/anvil binary for ${process.platform}/${process.arch}`)
  const packageName = `@foundry-rs/anvil-${os}-${arch}`
  let packageJson: string
  try {
    packageJson = createRequire(import.meta.url).resolve(`${packageName}/package.json`)
  } catch {
    throw new Error(`anvil: ${packageName} is not installed (it is an optional dependency of @foundry-rs/anvil): run npm ci`)
  }
  return join(dirname(packageJson), 'bin', 'anvil')
}

let accountsCache: PrivateKeyAccount[] | undefined

/** anvil's default dev accounts as private-key accounts, derived from ANVIL_MNEMONIC (m/44'/60'/0'/0/i). */
export function anvilAccounts(): PrivateKeyAccount[] {
  accountsCache ??= Array.from({ length: ACCOUNT_COUNT }, (_, addressIndex) => {
    const privateKey = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex }).getHdKey().privateKey
    if (!privateKey) throw new Error('anvil: could not derive a dev account key')
    return privateKeyToAccount(toHex(privateKey))
  })
  return accountsCache
}

/**
 * Starts a fresh anvil node on 127.0.0.1. anvil binds port 0 (an OS-chosen free port, so parallel test files never
 * collide) and the port is read from its "Listening on" line; the promise resolves once `eth_chainId` answers with
 * the requested id. Call `stop()` in afterAll; nodes left running are also killed when the process exits.
 */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const chainId = options.chainId ?? 31337
  const binary = anvilBinaryPath()
  const child = spawn(binary, ['--host', '127.0.0.1', '--port', '0', '--chain-id', String(chainId), '--accounts', String(ACCOUNT_COUNT)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const { stop } = trackChildProcess(child, STOP_TIMEOUT_MS)

  let output = ''
  const remember = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000)
  }
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = ''
      let listening = false
      const timer = setTimeout(
        () => reject(new Error(`anvil did not report a listening port within ${START_TIMEOUT_MS / 1000} s`)),
        START_TIMEOUT_MS,
      )
      // Both streams are drained for the node's whole life: anvil logs every RPC call, and a full pipe would block it.
      child.stderr?.on('data', remember)
      child.stdout?.on('data', (chunk: Buffer) => {
        remember(chunk)
        if (listening) return
        stdout += chunk.toString('utf8')
        const match = /Listening on [^\s:]+:(\d+)/.exec(stdout)
        if (match) {
          listening = true
          stdout = ''
          clearTimeout(timer)
          resolve(Number(match[1]))
        }
      })
      child.once('error', (error) => {
        clearTimeout(timer)
        reject(new Error(`anvil could not be started from ${binary}: ${error.message}`))
      })
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`anvil exited before listening (code ${code}, signal ${signal})`))
      })
    })

    const rpcUrl = `http://127.0.0.1:${port}`
    const chain = defineChain({
      id: chainId,
      name: `Anvil ${chainId}`,
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [rpcUrl] } },
    })
    const transport = http(rpcUrl, { retryCount: 0 })
    const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 })
    const testClient = createTestClient({ chain, transport, mode: 'anvil', pollingInterval: 50 })

    await waitForChainId(publicClient, chainId, Date.now() + START_TIMEOUT_MS)

    const accounts = anvilAccounts()
    const nodeAccounts = (await createWalletClient({ chain, transport }).getAddresses()).map((address) => getAddress(address))
    if (accounts.some((account, index) => nodeAccounts[index] !== account.address))
      throw new Error('anvil: its dev accounts are not those of the default mnemonic')

    return {
      rpcUrl,
      chainId,
      chain,
      publicClient,
      testClient,
      accounts,
      walletClient: (account) => createWalletClient({ account, chain, transport, pollingInterval: 50 }),
      stop,
    }
  } catch (error) {
    await stop()
    const message = error instanceof Error ? error.message : String(error)
    throw new Error(`${message}\n--- anvil output (tail) ---\n${output}`, { cause: error })
  }
}

async function waitForChainId(client: PublicClient, chainId: number, deadline: number): Promise<void> {
  let lastError: unknown
  while (Date.now() < deadline) {
    try {
      const answered = await client.getChainId()
      if (answered !== chainId) throw new Error(`anvil answered eth_chainId ${answered}, expected ${chainId}`)
      return
    } catch (error) {
      lastError = error
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  throw new Error(
    `anvil did not answer eth_chainId within ${START_TIMEOUT_MS / 1000} s: ${lastError instanceof Error ? lastError.message : String(lastError)}`,
  )
}

/**
 * Makes sure the deterministic CREATE2 deployer is at DETERMINISTIC_DEPLOYER (anvil 1.7.1 preinstalls it; this
 * installs the well-known runtime code with anvil_setCode if it is missing). Returns whether it had to install it.
 */
export async function ensureDeterministicDeployer(instance: AnvilInstance): Promise<boolean> {
  const code = await instance.publicClient.getCode({ address: DETERMINISTIC_DEPLOYER })
  if (code && code !== '0x') return false
  await instance.testClient.setCode({ address: DETERMINISTIC_DEPLOYER, bytecode: DETERMINISTIC_DEPLOYER_CODE })
  return true
}

/** Throws unless the receipt's status is success. */
export function assertSuccess(receipt: TransactionReceipt, what: string): TransactionReceipt {
  if (receipt.status !== 'success') throw new Error(`${what} reverted (tx ${receipt.transactionHash})`)
  return receipt
}

/** Deploys a contract from `account` and returns its address once mined; throws if the deployment reverted. */
export async function deployContract(
  instance: AnvilInstance,
  account: PrivateKeyAccount,
  artifact: { abi: Abi; bytecode: Hex },
  args: readonly unknown[] = [],
): Promise<Address> {
  const hash = await instance.walletClient(account).deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args,
  } as Parameters<WalletClient<Transport, Chain, PrivateKeyAccount>['deployContract']>[0])
  const receipt = assertSuccess(await instance.publicClient.waitForTransactionReceipt({ hash }), 'deployment')
  if (!receipt.contractAddress) throw new Error(`deployment tx ${hash} created no contract`)
  return getAddress(receipt.contractAddress)
}

export type WriteContractCall = {
  address: Address
  abi: Abi
  functionName: string
  args?: readonly unknown[]
  value?: bigint
  /** A fixed gas limit instead of viem's estimate (a call whose cost depends on the block it lands in). */
  gas?: bigint
}

/**
 * Sends a contract call from `account` and waits for its receipt; throws if it reverted. viem estimates gas first,
 * so a reverting call throws before sending, with the revert reason in the error message.
 */
export async function writeContractAndWait(
  instance: AnvilInstance,
  account: PrivateKeyAccount,
  call: WriteContractCall,
): Promise<TransactionReceipt> {
  const hash = await instance
    .walletClient(account)
    .writeContract(call as unknown as Parameters<WalletClient<Transport, Chain, PrivateKeyAccount>['writeContract']>[0])
  return assertSuccess(await instance.publicClient.waitForTransactionReceipt({ hash }), call.functionName)
}

/** Sends raw calldata from `account` and waits for its receipt; throws if it reverted. */
export async function sendAndWait(
  instance: AnvilInstance,
  account: PrivateKeyAccount,
  tx: { to: Address; data?: Hex; value?: bigint },
): Promise<TransactionReceipt> {
  const hash = await instance.walletClient(account).sendTransaction(tx)
  return assertSuccess(await instance.publicClient.waitForTransactionReceipt({ hash }), 'transaction')
}
