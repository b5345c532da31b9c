// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @dev `amountOffset` value meaning "send `data` as built": the call's amount is fixed in its calldata.
uint256 constant NO_PATCH = type(uint256).max;

/// One call of a route, made by the executor.
/// @param target   a venue or bridge contract on the owner's allow-list
/// @param token    the token the call spends: the executor approves `target` for its whole balance of it before the
///                 call and resets the allowance to zero after; address(0) for a call that spends no token
/// @param amountOffset byte offset in `data` of the 32-byte amount argument, overwritten with that balance (a hop's
///                 input is the previous hop's actual output, known only on chain); NO_PATCH to leave `data` alone
/// @param value    native value sent with the call (a bridge's messaging fee)
struct Call {
    address target;
    address token;
    uint256 amountOffset;
    uint256 value;
    bytes data;
}

/// A route as the signer's transaction carries it.
/// @param ref       the SwapEazi reference (swp_...) as bytes32, emitted with the outcome
/// @param amountIn  everything pulled from the signer: `fee` to the treasury, the rest through the route
/// @param fee       SwapEazi's margin: the 0.5% all-in fee less the route's real costs (DESIGN 3)
/// @param tokenOut  the token delivered on this chain, or address(0) when the route ends in a bridge deposit
/// @param minOut    the least `tokenOut` the recipient accepts (toAmountMin); ignored when tokenOut is address(0)
/// @param deadline  unix seconds: the router refuses the order (OrderExpired) in any block after it, so a
///                  transaction signed or mined late cannot run long after the prices it was sized on
/// @param calls     the route's calls; none for a plain transfer, whose `tokenOut` must then be `tokenIn`
struct Order {
    bytes32 ref;
    address tokenIn;
    uint256 amountIn;
    uint256 fee;
    address tokenOut;
    uint256 minOut;
    address recipient;
    uint256 deadline;
    Call[] calls;
}

/// What the executor on the destination chain does with bridged tokens, carried in the bridge's message.
/// @param token     the token the bridge delivers here
/// @param tokenOut  the token the recipient wants; if the calls cannot deliver `minOut` of it, the recipient gets
///                  `token` instead
/// @param deadline  unix seconds: a delivery in any block after it runs none of the calls and the recipient gets
///                  `token` (DestinationFallback), so a late bridge never swaps on a stale price nor strands the tokens
struct DestinationOrder {
    bytes32 ref;
    address token;
    address tokenOut;
    uint256 minOut;
    address recipient;
    uint256 deadline;
    Call[] calls;
}

/// An EIP-2612 permit for the router, signed by the signer of the transaction.
struct PermitSignature {
    uint256 value;
    uint256 deadline;
    uint8 v;
    bytes32 r;
    bytes32 s;
}
