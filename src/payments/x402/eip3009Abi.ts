import { parseAbi } from 'viem'

/**
 * The parts of USDC (FiatToken v2.2) an on-chain settlement calls: EIP-3009's `transferWithAuthorization` in its
 * 9-argument v,r,s overload (what an EOA's 65-byte signature needs; the `bytes signature` overload is newer), the
 * single-use check and the balance. `AuthorizationUsed` marks a spent (authorizer, nonce) in a receipt, and
 * `AuthorizationCanceled` one its signer canceled (`authorizationState` is true for both).
 */
export const eip3009Abi = parseAbi([
  'function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'function balanceOf(address account) view returns (uint256)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
])
