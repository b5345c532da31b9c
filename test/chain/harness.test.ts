import { TRANSFER_WITH_AUTHORIZATION_TYPES } from '../../src/payments/x402/verifyPayment.ts'
import { balancerVaultAbi } from '../../src/tx/abis.ts'
import {
  type AbiFunction,
  type Address,
  type Hex,
  type PrivateKeyAccount,
  concatHex,
  decodeFunctionData,
  domainSeparator,
  encodeFunctionData,
  encodePacked,
  getContractAddress,
  hexToBigInt,
  hexToNumber,
  keccak256,
  numberToHex,
  parseEventLogs,
  parseSignature,
  sliceHex,
  toFunctionSelector,
  toHex,
} from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  type AnvilInstance,
  DETERMINISTIC_DEPLOYER,
  DETERMINISTIC_DEPLOYER_CODE,
  ensureDeterministicDeployer,
  sendAndWait,
  startAnvil,
  writeContractAndWait,
} from './anvil.ts'
import {
  attestCctpMessage,
  cctpMessageFromDepositForBurn,
  decodeCctpMessage,
  depositForBurnEvent,
  TEST_CCTP_ATTESTER,
} from './cctpMessage.ts'
import {
  type StandInName,
  addressToBytes32,
  deployStandIn,
  standInAbi,
  standInArtifact,
  standInEvent,
  standInEvents,
  PERMIT_TYPES,
} from './standIns.ts'

let chainA: AnvilInstance
let chainB: AnvilInstance

beforeAll(async () => {
  const [a, b] = await Promise.allSettled([startAnvil(), startAnvil({ chainId: 8453 })])
  if (a.status === 'fulfilled') chainA = a.value
  if (b.status === 'fulfilled') chainB = b.value
  if (a.status === 'rejected') throw a.reason
  if (b.status === 'rejected') throw b.reason
  standInArtifact('TestToken') // compile once, outside the per-test timeout
}, 60_000)

afterAll(async () => {
  await Promise.all([chainA?.stop(), chainB?.stop()])
})

function write(
  instance: AnvilInstance,
  account: PrivateKeyAccount,
  address: Address,
  name: StandInName,
  functionName: string,
  args: readonly unknown[],
  value?: bigint,
) {
  return writeContractAndWait(instance, account, {
    address,
    abi: standInAbi(name),
    functionName,
    args,
    ...(value === undefined ? {} : { value }),
  })
}

function read<T>(
  instance: AnvilInstance,
  address: Address,
  name: StandInName,
  functionName: string,
  args: readonly unknown[] = [],
): Promise<T> {
  return instance.publicClient.readContract({ address, abi: standInAbi(name), functionName, args }) as Promise<T>
}

const balanceOf = (instance: AnvilInstance, token: Address, account: Address) =>
  read<bigint>(instance, token, 'TestToken', 'balanceOf', [account])

async function deployUsdc(instance: AnvilInstance): Promise<Address> {
  return deployStandIn(instance, instance.accounts[0]!, 'TestToken', ['USD Coin', 'USDC', 6, '2'])
}

async function latestTimestamp(instance: AnvilInstance): Promise<bigint> {
  return (await instance.publicClient.getBlock()).timestamp
}

describe('anvil harness', () => {
  it('runs two nodes with the requested chain ids and the funded default accounts', async () => {
    expect(chainA.chainId).toBe(31337)
    expect(await chainA.publicClient.getChainId()).toBe(31337)
    expect(await chainB.publicClient.getChainId()).toBe(8453)
    expect(chainA.rpcUrl).not.toBe(chainB.rpcUrl)
    expect(chainA.accounts).toHaveLength(10)
    expect(chainA.accounts[0]!.address).toBe('0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266')
    expect(await chainB.publicClient.getBalance({ address: chainB.accounts[9]!.address })).toBe(10_000n * 10n ** 18n)
  })

  it('has the deterministic CREATE2 deployer, reinstalls it when missing, and deploys through it', async () => {
    expect(await ensureDeterministicDeployer(chainA)).toBe(false) // anvil 1.7.1 preinstalls it
    await chainA.testClient.setCode({ address: DETERMINISTIC_DEPLOYER, bytecode: '0x' })
    expect(await ensureDeterministicDeployer(chainA)).toBe(true)
    expect(await chainA.publicClient.getCode({ address: DETERMINISTIC_DEPLOYER })).toBe(DETERMINISTIC_DEPLOYER_CODE)

    const salt = keccak256(toHex('harness'))
    const initCode = standInArtifact('UniswapV3RouterStandIn').bytecode
    await sendAndWait(chainA, chainA.accounts[0]!, { to: DETERMINISTIC_DEPLOYER, data: concatHex([salt, initCode]) })
    const expected = getContractAddress({ opcode: 'CREATE2', from: DETERMINISTIC_DEPLOYER, salt, bytecode: initCode })
    expect(await chainA.publicClient.getCode({ address: expected })).toBe(standInArtifact('UniswapV3RouterStandIn').deployedBytecode)
  })
})

describe('test tokens', () => {
  it('TestToken: mint, EIP-2612 permit signed with signTypedData, transferFrom', async () => {
    const [, owner, spender] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdc = await deployUsdc(chainA)
    await write(chainA, owner, usdc, 'TestToken', 'mint', [owner.address, 1_000_000_000n])
    expect(await balanceOf(chainA, usdc, owner.address)).toBe(1_000_000_000n)
    expect(await read<bigint>(chainA, usdc, 'TestToken', 'totalSupply')).toBe(1_000_000_000n)

    const domain = { name: 'USD Coin', version: '2', chainId: chainA.chainId, verifyingContract: usdc } as const
    expect(await read<Hex>(chainA, usdc, 'TestToken', 'DOMAIN_SEPARATOR')).toBe(domainSeparator({ domain }))

    const deadline = (await latestTimestamp(chainA)) + 3600n
    const permit = { owner: owner.address, spender: spender.address, value: 400_000_000n, nonce: 0n, deadline }
    const signature = await owner.signTypedData({
      domain,
      types: PERMIT_TYPES,
      primaryType: 'Permit',
      message: permit,
    })
    const { r, s, yParity } = parseSignature(signature)
    const permitArgs = [owner.address, spender.address, permit.value, deadline, 27 + yParity, r, s] as const
    const receipt = await write(chainA, spender, usdc, 'TestToken', 'permit', permitArgs)
    expect(standInEvent('TestToken', receipt.logs, usdc, 'Approval')).toEqual({
      owner: owner.address,
      spender: spender.address,
      value: 400_000_000n,
    })
    expect(await read<bigint>(chainA, usdc, 'TestToken', 'allowance', [owner.address, spender.address])).toBe(400_000_000n)
    expect(await read<bigint>(chainA, usdc, 'TestToken', 'nonces', [owner.address])).toBe(1n)
    // The nonce moved on: the same signature no longer recovers to the owner.
    await expect(write(chainA, spender, usdc, 'TestToken', 'permit', permitArgs)).rejects.toThrow(/EIP2612: invalid signature/)

    await write(chainA, spender, usdc, 'TestToken', 'transferFrom', [owner.address, spender.address, 250_000_000n])
    expect(await balanceOf(chainA, usdc, owner.address)).toBe(750_000_000n)
    expect(await balanceOf(chainA, usdc, spender.address)).toBe(250_000_000n)
    expect(await read<bigint>(chainA, usdc, 'TestToken', 'allowance', [owner.address, spender.address])).toBe(150_000_000n)
    await expect(write(chainA, spender, usdc, 'TestToken', 'transferFrom', [owner.address, spender.address, 150_000_001n])).rejects.toThrow(
      /ERC20: insufficient allowance/,
    )
  })

  it('TestToken: EIP-3009 transferWithAuthorization, single use; receiveWithAuthorization only by the payee', async () => {
    const [, from, to, relayer] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdc = await deployUsdc(chainA)
    await write(chainA, from, usdc, 'TestToken', 'mint', [from.address, 300_000_000n])
    const domain = { name: 'USD Coin', version: '2', chainId: chainA.chainId, verifyingContract: usdc } as const
    // EIP-3009's transfer and receive authorizations sign the same fields.
    const authorizationFields = TRANSFER_WITH_AUTHORIZATION_TYPES.TransferWithAuthorization
    const validBefore = (await latestTimestamp(chainA)) + 3600n
    const authorization = {
      from: from.address,
      to: to.address,
      value: 120_000_000n,
      validAfter: 0n,
      validBefore,
      nonce: keccak256(toHex('authorization-1')),
    }
    const signature = parseSignature(
      await from.signTypedData({
        domain,
        types: { TransferWithAuthorization: authorizationFields },
        primaryType: 'TransferWithAuthorization',
        message: authorization,
      }),
    )
    const args = [
      from.address,
      to.address,
      authorization.value,
      0n,
      validBefore,
      authorization.nonce,
      27 + signature.yParity,
      signature.r,
      signature.s,
    ] as const
    const receipt = await write(chainA, relayer, usdc, 'TestToken', 'transferWithAuthorization', args)
    expect(standInEvent('TestToken', receipt.logs, usdc, 'AuthorizationUsed')).toEqual({
      authorizer: from.address,
      nonce: authorization.nonce,
    })
    expect(await balanceOf(chainA, usdc, from.address)).toBe(180_000_000n)
    expect(await balanceOf(chainA, usdc, to.address)).toBe(120_000_000n)
    expect(await read<boolean>(chainA, usdc, 'TestToken', 'authorizationState', [from.address, authorization.nonce])).toBe(true)
    await expect(write(chainA, relayer, usdc, 'TestToken', 'transferWithAuthorization', args)).rejects.toThrow(
      /authorization is used or canceled/,
    )

    const receiveNonce = keccak256(toHex('authorization-2'))
    const receiveSignature = parseSignature(
      await from.signTypedData({
        domain,
        types: { ReceiveWithAuthorization: authorizationFields },
        primaryType: 'ReceiveWithAuthorization',
        message: { ...authorization, value: 30_000_000n, nonce: receiveNonce },
      }),
    )
    const receiveArgs = [
      from.address,
      to.address,
      30_000_000n,
      0n,
      validBefore,
      receiveNonce,
      27 + receiveSignature.yParity,
      receiveSignature.r,
      receiveSignature.s,
    ] as const
    await expect(write(chainA, relayer, usdc, 'TestToken', 'receiveWithAuthorization', receiveArgs)).rejects.toThrow(
      /caller must be the payee/,
    )
    await write(chainA, to, usdc, 'TestToken', 'receiveWithAuthorization', receiveArgs)
    expect(await balanceOf(chainA, usdc, to.address)).toBe(150_000_000n)
  })

  it('ResetApprovalToken: non-zero to non-zero approve reverts, and nothing is returned', async () => {
    const [deployer, owner, spender] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdt = await deployStandIn(chainA, deployer, 'ResetApprovalToken', ['Tether USD', 'USDT', 6])
    await write(chainA, owner, usdt, 'ResetApprovalToken', 'approve', [spender.address, 100n])
    await expect(write(chainA, owner, usdt, 'ResetApprovalToken', 'approve', [spender.address, 50n])).rejects.toThrow(
      /approve from non-zero to non-zero allowance/,
    )
    await write(chainA, owner, usdt, 'ResetApprovalToken', 'approve', [spender.address, 0n])
    await write(chainA, owner, usdt, 'ResetApprovalToken', 'approve', [spender.address, 50n])
    expect(await read<bigint>(chainA, usdt, 'ResetApprovalToken', 'allowance', [owner.address, spender.address])).toBe(50n)

    await write(chainA, owner, usdt, 'ResetApprovalToken', 'mint', [owner.address, 10n])
    const abi = standInAbi('ResetApprovalToken')
    for (const data of [
      encodeFunctionData({ abi, functionName: 'transfer', args: [spender.address, 1n] }),
      encodeFunctionData({ abi, functionName: 'approve', args: [spender.address, 0n] }),
    ]) {
      const result = await chainA.publicClient.call({ account: owner.address, to: usdt, data })
      expect(result.data ?? '0x').toBe('0x')
    }
  })
})

describe('venue stand-ins', () => {
  it('Uniswap v3 exactInputSingle: exact amounts, USDT-style input, min enforced, call recorded', async () => {
    const [deployer, trader, recipient] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdc = await deployUsdc(chainA)
    const usdt = await deployStandIn(chainA, deployer, 'ResetApprovalToken', ['Tether USD', 'USDT', 6])
    const router = await deployStandIn(chainA, deployer, 'UniswapV3RouterStandIn', [])
    await write(chainA, deployer, usdc, 'TestToken', 'mint', [router, 10_000_000_000n])
    await write(chainA, trader, usdt, 'ResetApprovalToken', 'mint', [trader.address, 1_000_000_000n])
    await write(chainA, trader, usdt, 'ResetApprovalToken', 'approve', [router, 1_000_000_000n])

    const params = {
      tokenIn: usdt,
      tokenOut: usdc,
      fee: 100,
      recipient: recipient.address,
      amountIn: 1_000_000_000n,
      amountOutMinimum: 999_500_001n,
      sqrtPriceLimitX96: 0n,
    }
    await expect(write(chainA, trader, router, 'UniswapV3RouterStandIn', 'exactInputSingle', [params])).rejects.toThrow(/no rate/)
    await write(chainA, deployer, router, 'UniswapV3RouterStandIn', 'setRate', [usdt, usdc, 9995n, 10_000n])
    await expect(write(chainA, trader, router, 'UniswapV3RouterStandIn', 'exactInputSingle', [params])).rejects.toThrow(
      /Too little received/,
    )

    const exact = { ...params, amountOutMinimum: 999_500_000n }
    const { result } = await chainA.publicClient.simulateContract({
      account: trader,
      address: router,
      abi: standInAbi('UniswapV3RouterStandIn'),
      functionName: 'exactInputSingle',
      args: [exact],
    })
    expect(result).toBe(999_500_000n)
    const receipt = await write(chainA, trader, router, 'UniswapV3RouterStandIn', 'exactInputSingle', [exact])
    expect(standInEvent('UniswapV3RouterStandIn', receipt.logs, router, 'ExactInputSingleCalled')).toEqual({
      sender: trader.address,
      params: exact,
      msgValue: 0n,
      paidTo: recipient.address,
      amountOut: 999_500_000n,
    })
    expect(await balanceOf(chainA, usdt, trader.address)).toBe(0n)
    expect(await balanceOf(chainA, usdt, router)).toBe(1_000_000_000n)
    expect(await balanceOf(chainA, usdc, recipient.address)).toBe(999_500_000n)
    expect(await balanceOf(chainA, usdc, router)).toBe(10_000_000_000n - 999_500_000n)
  })

  it('Curve and PancakeSwap StableSwap exchange pay msg.sender and enforce min_dy', async () => {
    const [deployer, trader] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount]
    const dai = await deployStandIn(chainA, deployer, 'TestToken', ['Dai', 'DAI', 18, '1'])
    const usdc = await deployUsdc(chainA)
    const usdt = await deployStandIn(chainA, deployer, 'TestToken', ['Tether USD', 'USDT', 6, '1'])
    const curve = await deployStandIn(chainA, deployer, 'CurvePoolStandIn', [[dai, usdc, usdt]])
    const pancake = await deployStandIn(chainA, deployer, 'PancakeStableSwapStandIn', [[usdc, usdt]])
    expect(await read<Address>(chainA, curve, 'CurvePoolStandIn', 'coins', [2n])).toBe(usdt)
    expect(await read<Address>(chainA, pancake, 'PancakeStableSwapStandIn', 'coins', [0n])).toBe(usdc)

    await write(chainA, deployer, dai, 'TestToken', 'mint', [curve, 10n ** 24n])
    await write(chainA, deployer, usdt, 'TestToken', 'mint', [pancake, 10n ** 12n])
    await write(chainA, deployer, curve, 'CurvePoolStandIn', 'setRate', [usdc, dai, 10n ** 12n * 999n, 1000n])
    await write(chainA, deployer, pancake, 'PancakeStableSwapStandIn', 'setRate', [usdc, usdt, 1n, 1n])
    await write(chainA, trader, usdc, 'TestToken', 'mint', [trader.address, 3_000_000n])
    await write(chainA, trader, usdc, 'TestToken', 'approve', [curve, 2_000_000n])
    await write(chainA, trader, usdc, 'TestToken', 'approve', [pancake, 1_000_000n])

    await expect(
      write(chainA, trader, curve, 'CurvePoolStandIn', 'exchange', [1n, 0n, 2_000_000n, 1_998_000_000_000_000_001n]),
    ).rejects.toThrow(/Exchange resulted in fewer coins than expected/)
    const curveReceipt = await write(chainA, trader, curve, 'CurvePoolStandIn', 'exchange', [
      1n,
      0n,
      2_000_000n,
      1_998_000_000_000_000_000n,
    ])
    expect(standInEvent('CurvePoolStandIn', curveReceipt.logs, curve, 'ExchangeCalled')).toMatchObject({
      i: 1n,
      j: 0n,
      dx: 2_000_000n,
      dy: 1_998_000_000_000_000_000n,
    })
    expect(await balanceOf(chainA, dai, trader.address)).toBe(1_998_000_000_000_000_000n)

    await expect(
      write(chainA, trader, pancake, 'PancakeStableSwapStandIn', 'exchange', [0n, 1n, 1_000_000n, 1_000_000n], 1n),
    ).rejects.toThrow(/Inconsistent quantity/)
    await write(chainA, trader, pancake, 'PancakeStableSwapStandIn', 'exchange', [0n, 1n, 1_000_000n, 1_000_000n])
    expect(await balanceOf(chainA, usdt, trader.address)).toBe(1_000_000n)
    expect(await balanceOf(chainA, usdc, trader.address)).toBe(0n)
  })

  it('Solidly chains routes; Balancer pays funds.recipient; Mento pays msg.sender; each enforces its minimum', async () => {
    const [deployer, trader, recipient] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdc = await deployUsdc(chainA)
    const usdt = await deployStandIn(chainA, deployer, 'TestToken', ['Tether USD', 'USDT', 6, '1'])
    const usds = await deployStandIn(chainA, deployer, 'TestToken', ['USDS', 'USDS', 18, '1'])
    const solidly = await deployStandIn(chainA, deployer, 'SolidlyRouterStandIn', [])
    const vault = await deployStandIn(chainA, deployer, 'BalancerVaultStandIn', [])
    const broker = await deployStandIn(chainA, deployer, 'MentoBrokerStandIn', [])
    for (const venue of [solidly, vault, broker]) {
      await write(chainA, deployer, usds, 'TestToken', 'mint', [venue, 10n ** 24n])
      await write(chainA, deployer, usdt, 'TestToken', 'mint', [venue, 10n ** 12n])
    }
    await write(chainA, trader, usdc, 'TestToken', 'mint', [trader.address, 30_000_000n])
    await write(chainA, trader, usdc, 'TestToken', 'approve', [solidly, 10_000_000n])
    await write(chainA, trader, usdc, 'TestToken', 'approve', [vault, 10_000_000n])
    await write(chainA, trader, usdc, 'TestToken', 'approve', [broker, 10_000_000n])
    const now = await latestTimestamp(chainA)

    // Solidly: USDC → USDT (0.999) → USDS (×1e12): 10 USDC → 9.99 USDT → 9.99 USDS.
    await write(chainA, deployer, solidly, 'SolidlyRouterStandIn', 'setRate', [usdc, usdt, 999n, 1000n])
    await write(chainA, deployer, solidly, 'SolidlyRouterStandIn', 'setRate', [usdt, usds, 10n ** 12n, 1n])
    const factory = '0x420DD381b31aEf6683db6B902084cB0FFECe40Da'
    const routes = [
      { from: usdc, to: usdt, stable: true, factory },
      { from: usdt, to: usds, stable: false, factory },
    ]
    const out = 9_990_000n * 10n ** 12n
    await expect(
      write(chainA, trader, solidly, 'SolidlyRouterStandIn', 'swapExactTokensForTokens', [
        10_000_000n,
        out,
        routes,
        recipient.address,
        now - 1n,
      ]),
    ).rejects.toThrow(/EXPIRED/)
    await expect(
      write(chainA, trader, solidly, 'SolidlyRouterStandIn', 'swapExactTokensForTokens', [
        10_000_000n,
        out + 1n,
        routes,
        recipient.address,
        now + 600n,
      ]),
    ).rejects.toThrow(/INSUFFICIENT_OUTPUT_AMOUNT/)
    const solidlyReceipt = await write(chainA, trader, solidly, 'SolidlyRouterStandIn', 'swapExactTokensForTokens', [
      10_000_000n,
      out,
      routes,
      recipient.address,
      now + 600n,
    ])
    expect(standInEvent('SolidlyRouterStandIn', solidlyReceipt.logs, solidly, 'SwapExactTokensForTokensCalled')).toMatchObject({
      routes,
      amounts: [10_000_000n, 9_990_000n, out],
      to: recipient.address,
    })
    expect(await balanceOf(chainA, usds, recipient.address)).toBe(out)

    // Balancer: a two-step GIVEN_IN batchSwap USDC → USDS (hub) → USDT, 0.9998 overall, pays funds.recipient.
    const usdcPool = keccak256(toHex('USDC/USDS pool'))
    const usdtPool = keccak256(toHex('USDS/USDT pool'))
    await write(chainA, deployer, vault, 'BalancerVaultStandIn', 'registerPool', [usdcPool, [usdc, usds]])
    await write(chainA, deployer, vault, 'BalancerVaultStandIn', 'registerPool', [usdtPool, [usds, usdt]])
    await write(chainA, deployer, vault, 'BalancerVaultStandIn', 'setRate', [usdc, usds, 9998n * 10n ** 12n, 10_000n])
    await write(chainA, deployer, vault, 'BalancerVaultStandIn', 'setRate', [usds, usdt, 1n, 10n ** 12n])
    const steps = [
      { poolId: usdcPool, assetInIndex: 0n, assetOutIndex: 1n, amount: 10_000_000n, userData: '0x' as Hex },
      { poolId: usdtPool, assetInIndex: 1n, assetOutIndex: 2n, amount: 0n, userData: '0x' as Hex },
    ]
    const assets = [usdc, usds, usdt]
    const funds = { sender: trader.address, fromInternalBalance: false, recipient: recipient.address, toInternalBalance: false }
    const maxIn = 2n ** 255n - 1n
    const batch = (overrides: { swaps?: typeof steps; funds?: typeof funds; limits?: bigint[]; deadline?: bigint } = {}) =>
      write(chainA, trader, vault, 'BalancerVaultStandIn', 'batchSwap', [
        0,
        overrides.swaps ?? steps,
        assets,
        overrides.funds ?? funds,
        overrides.limits ?? [maxIn, 0n, -9_998_000n],
        overrides.deadline ?? now + 600n,
      ])
    await expect(batch({ limits: [maxIn, 0n, -9_998_001n] })).rejects.toThrow(/BAL#507/)
    await expect(batch({ limits: [9_999_999n, 0n, 0n] })).rejects.toThrow(/BAL#507/)
    await expect(batch({ funds: { ...funds, sender: recipient.address } })).rejects.toThrow(/BAL#401/)
    await expect(batch({ deadline: now - 1n })).rejects.toThrow(/BAL#508/)
    await expect(batch({ swaps: [steps[0]!, { ...steps[1]!, poolId: keccak256(toHex('no such pool')) }] })).rejects.toThrow(/BAL#500/)
    await expect(batch({ swaps: [steps[0]!, { ...steps[1]!, poolId: usdcPool }] })).rejects.toThrow(/BAL#521/)
    await expect(batch({ swaps: [{ ...steps[0]!, amount: 0n }, steps[1]!] })).rejects.toThrow(/BAL#510/)
    await expect(batch({ swaps: [steps[0]!, { ...steps[1]!, assetInIndex: 0n }] })).rejects.toThrow(/BAL#511/)
    const vaultReceipt = await batch()
    const recorded = standInEvent('BalancerVaultStandIn', vaultReceipt.logs, vault, 'BatchSwapCalled')
    expect(recorded.assetDeltas).toEqual([10_000_000n, 0n, -9_998_000n])
    expect(decodeFunctionData({ abi: balancerVaultAbi, data: recorded.data as Hex }).args).toEqual([
      0,
      steps,
      assets,
      funds,
      [maxIn, 0n, -9_998_000n],
      now + 600n,
    ])
    expect(await balanceOf(chainA, usdt, recipient.address)).toBe(9_998_000n)

    // Mento: swapIn USDC → USDT at 1:1 minus 0.05%, to msg.sender.
    await write(chainA, deployer, broker, 'MentoBrokerStandIn', 'setRate', [usdc, usdt, 9995n, 10_000n])
    const provider = '0x0000000000000000000000000000000000000b0b'
    const exchangeId = keccak256(toHex('cUSD/USDC'))
    await expect(
      write(chainA, trader, broker, 'MentoBrokerStandIn', 'swapIn', [provider, exchangeId, usdc, usdt, 10_000_000n, 9_995_001n]),
    ).rejects.toThrow(/amountOutMin not met/)
    await write(chainA, trader, broker, 'MentoBrokerStandIn', 'swapIn', [provider, exchangeId, usdc, usdt, 10_000_000n, 9_995_000n])
    expect(await balanceOf(chainA, usdt, trader.address)).toBe(9_995_000n)
    expect(await balanceOf(chainA, usdc, trader.address)).toBe(0n)
  })
})

describe('bridge stand-ins', () => {
  it('CCTP v2: depositForBurnWithHook on one chain, receiveMessage mints amount - fee on chain 8453', async () => {
    const [deployerA, depositor] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount]
    const [, , , , , , , mintRecipient, destinationCaller, stranger] = chainB.accounts as PrivateKeyAccount[] as [
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
    ]
    const usdcA = await deployUsdc(chainA)
    const messenger = await deployStandIn(chainA, deployerA, 'TokenMessengerV2StandIn', [0])
    const usdcB = await deployUsdc(chainB)
    const transmitter = await deployStandIn(chainB, chainB.accounts[0]!, 'MessageTransmitterV2StandIn', [6, usdcB, TEST_CCTP_ATTESTER])

    await write(chainA, depositor, usdcA, 'TestToken', 'mint', [depositor.address, 50_000_000n])
    await write(chainA, depositor, usdcA, 'TestToken', 'approve', [messenger, 50_000_000n])
    const hookData: Hex = '0xdeadbeef0001'
    const depositArgs = [
      50_000_000n,
      6,
      addressToBytes32(mintRecipient.address),
      usdcA,
      addressToBytes32(destinationCaller.address),
      5_000n,
      1000,
    ] as const
    await expect(
      write(chainA, depositor, messenger, 'TokenMessengerV2StandIn', 'depositForBurnWithHook', [...depositArgs, '0x']),
    ).rejects.toThrow(/Hook data is empty/)
    const receipt = await write(chainA, depositor, messenger, 'TokenMessengerV2StandIn', 'depositForBurnWithHook', [
      ...depositArgs,
      hookData,
    ])
    expect(await balanceOf(chainA, usdcA, depositor.address)).toBe(0n)
    expect(await balanceOf(chainA, usdcA, messenger)).toBe(0n)
    expect(await read<bigint>(chainA, usdcA, 'TestToken', 'totalSupply')).toBe(0n) // burnt

    const [log, ...others] = parseEventLogs({ abi: [depositForBurnEvent], logs: receipt.logs })
    expect(others).toHaveLength(0)
    expect(log!.address).toBe(messenger.toLowerCase())
    expect(log!.args).toEqual({
      burnToken: usdcA,
      amount: 50_000_000n,
      depositor: depositor.address,
      mintRecipient: addressToBytes32(mintRecipient.address),
      destinationDomain: 6,
      destinationTokenMessenger: addressToBytes32(messenger),
      destinationCaller: addressToBytes32(destinationCaller.address),
      maxFee: 5_000n,
      minFinalityThreshold: 1000,
      hookData,
    })

    const message = cctpMessageFromDepositForBurn(log!, { sourceDomain: 0, feeExecuted: 1_234n })
    const fields = decodeCctpMessage(message)
    expect(fields).toMatchObject({
      version: 1,
      sourceDomain: 0,
      destinationDomain: 6,
      sender: addressToBytes32(messenger),
      finalityThresholdExecuted: 1000,
      messageSender: addressToBytes32(depositor.address),
      amount: 50_000_000n,
      feeExecuted: 1_234n,
      hookData,
    })

    const attestation = await attestCctpMessage(message)
    // Refused as MessageTransmitterV2 refuses them: no attestation, another signer, a message changed after signing,
    // and the malleable twin of the right signature (s replaced by n - s, v flipped).
    const receive = (account: PrivateKeyAccount, signed: Hex, body: Hex = message) =>
      write(chainB, account, transmitter, 'MessageTransmitterV2StandIn', 'receiveMessage', [body, signed])
    await expect(receive(destinationCaller, '0x')).rejects.toThrow(/Invalid attestation length/)
    await expect(receive(destinationCaller, await attestCctpMessage(message, keccak256(toHex('not the attester'))))).rejects.toThrow(
      /Invalid signer for signature/,
    )
    const raised = cctpMessageFromDepositForBurn(log!, { sourceDomain: 0, feeExecuted: 1_000n })
    await expect(receive(destinationCaller, attestation, raised)).rejects.toThrow(/Invalid signer for signature/)
    const secp256k1n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n
    const s = hexToBigInt(sliceHex(attestation, 32, 64))
    const v = hexToNumber(sliceHex(attestation, 64))
    const twin = concatHex([
      sliceHex(attestation, 0, 32),
      numberToHex(secp256k1n - s, { size: 32 }),
      numberToHex(v === 27 ? 28 : 27, { size: 1 }),
    ])
    await expect(receive(destinationCaller, twin)).rejects.toThrow(/invalid signature 's' value/)
    await expect(receive(stranger, attestation)).rejects.toThrow(/Invalid caller for message/)
    const minted = await write(chainB, destinationCaller, transmitter, 'MessageTransmitterV2StandIn', 'receiveMessage', [
      message,
      attestation,
    ])
    expect(await balanceOf(chainB, usdcB, mintRecipient.address)).toBe(50_000_000n - 1_234n)
    expect(standInEvent('MessageTransmitterV2StandIn', minted.logs, transmitter, 'MintAndWithdraw')).toEqual({
      mintRecipient: mintRecipient.address,
      amount: 49_998_766n,
      mintToken: usdcB,
      feeCollected: 1_234n,
    })
    expect(standInEvent('MessageTransmitterV2StandIn', minted.logs, transmitter, 'MessageReceived')).toEqual({
      caller: destinationCaller.address,
      sourceDomain: 0,
      nonce: fields.nonce,
      sender: addressToBytes32(messenger),
      finalityThresholdExecuted: 1000,
      messageBody: sliceHex(message, 148),
    })
    expect(await read<bigint>(chainB, transmitter, 'MessageTransmitterV2StandIn', 'usedNonces', [fields.nonce])).toBe(1n)
    await expect(
      write(chainB, destinationCaller, transmitter, 'MessageTransmitterV2StandIn', 'receiveMessage', [message, attestation]),
    ).rejects.toThrow(/Nonce already used/)
  })

  it('Across: deposit records every argument in FundsDeposited; fillRelay pays and calls handleV3AcrossMessage', async () => {
    const [deployer, depositor, relayer] = chainA.accounts as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount]
    const usdc = await deployUsdc(chainA)
    const spokePool = await deployStandIn(chainA, deployer, 'SpokePoolStandIn', [])
    const recorder = await deployStandIn(chainA, deployer, 'BridgeReceiverRecorder', [])
    const abi = standInAbi('SpokePoolStandIn')
    expect(await read<Hex>(chainA, spokePool, 'SpokePoolStandIn', 'DEPOSIT_SELECTOR')).toBe(
      toFunctionSelector(abi.find((item): item is AbiFunction => item.type === 'function' && item.name === 'deposit')!),
    )

    await write(chainA, depositor, usdc, 'TestToken', 'mint', [depositor.address, 20_000_000n])
    await write(chainA, depositor, usdc, 'TestToken', 'approve', [spokePool, 20_000_000n])
    const now = Number(await latestTimestamp(chainA))
    const args = {
      depositor: addressToBytes32(depositor.address),
      recipient: addressToBytes32(recorder),
      inputToken: addressToBytes32(usdc),
      outputToken: addressToBytes32('0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'),
      inputAmount: 20_000_000n,
      outputAmount: 19_990_000n,
      destinationChainId: 8453n,
      exclusiveRelayer: addressToBytes32(relayer.address),
      quoteTimestamp: now - 60,
      fillDeadline: now + 21_600,
      exclusivityParameter: 10,
      message: '0xc0ffee' as Hex,
    }
    const ordered = Object.values(args)
    await expect(
      write(chainA, depositor, spokePool, 'SpokePoolStandIn', 'deposit', [...ordered.slice(0, 9), now - 1, ...ordered.slice(10)]),
    ).rejects.toThrow(/InvalidFillDeadline/)
    const receipt = await write(chainA, depositor, spokePool, 'SpokePoolStandIn', 'deposit', ordered)
    const block = await chainA.publicClient.getBlock({ blockNumber: receipt.blockNumber })
    const { exclusivityParameter, ...eventFields } = args
    expect(standInEvent('SpokePoolStandIn', receipt.logs, spokePool, 'FundsDeposited')).toEqual({
      ...eventFields,
      depositId: 0n,
      exclusivityDeadline: Number(block.timestamp) + exclusivityParameter,
    })
    expect(standInEvent('SpokePoolStandIn', receipt.logs, spokePool, 'DepositRecorded')).toEqual({
      depositId: 0n,
      caller: depositor.address,
      exclusivityParameter: 10,
      msgValue: 0n,
    })
    expect(await balanceOf(chainA, usdc, spokePool)).toBe(20_000_000n)

    await write(chainA, relayer, usdc, 'TestToken', 'mint', [relayer.address, 19_990_000n])
    await write(chainA, relayer, usdc, 'TestToken', 'approve', [spokePool, 19_990_000n])
    const fill = await write(chainA, relayer, spokePool, 'SpokePoolStandIn', 'fillRelay', [usdc, 19_990_000n, recorder, '0xc0ffee'])
    expect(standInEvent('BridgeReceiverRecorder', fill.logs, recorder, 'AcrossMessageHandled')).toEqual({
      caller: spokePool,
      tokenSent: usdc,
      amount: 19_990_000n,
      relayer: relayer.address,
      message: '0xc0ffee',
      tokenBalance: 19_990_000n,
    })
  })

  it('Stargate/OFT send: fee, dust, refund and slippage; LayerZero deliver composes in the OFTComposeMsgCodec layout', async () => {
    const [deployer, sender, refund, executor] = chainA.accounts as [
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
      PrivateKeyAccount,
    ]
    const usdt = await deployStandIn(chainA, deployer, 'TestToken', ['Tether USD', 'USDT', 18, '1'])
    const pool = await deployStandIn(chainA, deployer, 'StargateOftStandIn', [usdt, 500n]) // 0.05%
    const endpoint = await deployStandIn(chainA, deployer, 'LayerZeroEndpointStandIn', [])
    const recorder = await deployStandIn(chainA, deployer, 'BridgeReceiverRecorder', [])
    expect(await read<Address>(chainA, pool, 'StargateOftStandIn', 'token')).toBe(usdt)

    const amountLD = 100n * 10n ** 18n + 123n // 123 wei of dust below 6 shared decimals
    await write(chainA, sender, usdt, 'TestToken', 'mint', [sender.address, amountLD])
    await write(chainA, sender, usdt, 'TestToken', 'approve', [pool, amountLD])
    const sendParam = {
      dstEid: 30184,
      to: addressToBytes32(recorder),
      amountLD,
      minAmountLD: 99_950_000n * 10n ** 12n,
      extraOptions: '0x0003' as Hex,
      composeMsg: '0xabcd' as Hex,
      oftCmd: '0x' as Hex,
    }
    const fee = { nativeFee: 10n ** 15n, lzTokenFee: 0n }
    await expect(
      write(chainA, sender, pool, 'StargateOftStandIn', 'send', [sendParam, fee, refund.address], 10n ** 15n - 1n),
    ).rejects.toThrow(/insufficient native fee/)
    await expect(
      write(
        chainA,
        sender,
        pool,
        'StargateOftStandIn',
        'send',
        [{ ...sendParam, minAmountLD: sendParam.minAmountLD + 1n }, fee, refund.address],
        10n ** 15n,
      ),
    ).rejects.toThrow(/Stargate: slippage too high/)

    const refundBefore = await chainA.publicClient.getBalance({ address: refund.address })
    const receipt = await write(chainA, sender, pool, 'StargateOftStandIn', 'send', [sendParam, fee, refund.address], 3n * 10n ** 15n)
    expect(await chainA.publicClient.getBalance({ address: refund.address })).toBe(refundBefore + 2n * 10n ** 15n)
    expect(await chainA.publicClient.getBalance({ address: pool })).toBe(10n ** 15n)
    expect(await balanceOf(chainA, usdt, sender.address)).toBe(123n) // dust stays with the sender
    const sent = standInEvent('StargateOftStandIn', receipt.logs, pool, 'OFTSent')
    expect(sent).toMatchObject({
      dstEid: 30184,
      fromAddress: sender.address,
      amountSentLD: 100n * 10n ** 18n,
      amountReceivedLD: 99_950_000n * 10n ** 12n,
    })
    expect(standInEvent('StargateOftStandIn', receipt.logs, pool, 'SendRecorded')).toEqual({
      guid: sent.guid,
      sender: sender.address,
      sendParam,
      fee,
      refundAddress: refund.address,
      msgValue: 3n * 10n ** 15n,
    })

    const composeFrom = addressToBytes32(sender.address)
    const delivered = await write(
      chainA,
      executor,
      endpoint,
      'LayerZeroEndpointStandIn',
      'deliver',
      [pool, usdt, recorder, 99_950_000n * 10n ** 12n, 30101, composeFrom, '0xabcd'],
      7n,
    )
    expect(await balanceOf(chainA, usdt, recorder)).toBe(99_950_000n * 10n ** 12n)
    const deliveredEvent = standInEvent('LayerZeroEndpointStandIn', delivered.logs, endpoint, 'Delivered')
    expect(standInEvents('BridgeReceiverRecorder', delivered.logs, { address: recorder })).toEqual([
      expect.objectContaining({
        eventName: 'LzComposeHandled',
        args: {
          caller: endpoint,
          from: pool,
          guid: deliveredEvent.guid,
          message: encodePacked(
            ['uint64', 'uint32', 'uint256', 'bytes32', 'bytes'],
            [1n, 30101, 99_950_000n * 10n ** 12n, composeFrom, '0xabcd'],
          ),
          executor: executor.address,
          extraData: '0x',
          msgValue: 7n,
        },
      }),
    ])
  })
})
