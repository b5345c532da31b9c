// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {Call, DestinationOrder, NO_PATCH} from "./SwapEaziTypes.sol";
import {TokenTransfers} from "./TokenTransfers.sol";

interface IMessageTransmitterV2 {
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool);
}

interface IOFTToken {
    function token() external view returns (address);
}

/// @title SwapEazi executor
/// @notice Makes a route's calls. It is deployed by the router, holds no user's allowance and no funds between
/// transactions, so no call it makes (even to a wrongly allow-listed token) can reach a user's tokens. On a
/// destination chain it receives bridged tokens with a DestinationOrder in the bridge's message and runs it.
contract SwapEaziExecutor {
    using TokenTransfers for address;

    /// @dev CCTP v2: a message is a 148-byte header, then the burn message: mintRecipient at byte 36 of the body
    /// and hook data from byte 228 (circlefin/evm-cctp-contracts MessageV2, BurnMessageV2).
    uint256 private constant CCTP_MINT_RECIPIENT_START = 148 + 36;
    uint256 private constant CCTP_HOOK_DATA_START = 148 + 228;
    /// @dev LayerZero OFT compose message: nonce (8), srcEid (4), amountLD (32), composeFrom (32), compose message.
    uint256 private constant LZ_AMOUNT_START = 12;
    uint256 private constant LZ_COMPOSE_MSG_START = 76;

    address public immutable router;
    mapping(address target => bool allowed) public isAllowedTarget;
    uint256 private _lock = 1;

    event DestinationExecuted(
        bytes32 indexed ref, address indexed recipient, address token, uint256 amountIn, address tokenOut, uint256 amountOut
    );
    event DestinationFallback(bytes32 indexed ref, address indexed recipient, address token, uint256 amount, bytes reason);

    modifier nonReentrant() {
        require(_lock == 1, "SwapEazi: reentrant call");
        _lock = 2;
        _;
        _lock = 1;
    }

    constructor() {
        router = msg.sender;
    }

    /// @notice Allow or remove a call target. Only the router, on its owner's instruction.
    function setTarget(address target, bool allowed) external {
        require(msg.sender == router, "SwapEazi: only the router");
        isAllowedTarget[target] = allowed;
    }

    /// @notice Runs a source-chain route the router has funded, then delivers `tokenOut` (at least `minOut`) to the
    /// recipient and returns any leftover input and native value to `refundTo`.
    function run(
        Call[] calldata calls,
        address tokenIn,
        address tokenOut,
        uint256 minOut,
        address recipient,
        address refundTo
    ) external payable returns (uint256 amountOut) {
        require(msg.sender == router, "SwapEazi: only the router");
        _runCalls(calls);
        if (tokenOut != address(0)) {
            amountOut = tokenOut.balanceOf(address(this));
            require(amountOut >= minOut, "SwapEazi: output below minimum");
            tokenOut.safeTransfer(recipient, amountOut);
        }
        _sweep(tokenIn, refundTo);
        for (uint256 k = 0; k < calls.length; k++) {
            address spent = calls[k].token;
            if (spent != address(0) && spent != tokenIn && spent != tokenOut) _sweep(spent, refundTo);
        }
        if (address(this).balance > 0) {
            (bool ok,) = refundTo.call{value: address(this).balance}("");
            require(ok, "SwapEazi: native refund failed");
        }
    }

    /// @notice Across: the SpokePool calls this after a relayer filled a deposit whose recipient is this contract.
    function handleV3AcrossMessage(address tokenSent, uint256 amount, address, bytes calldata message)
        external
        nonReentrant
    {
        require(isAllowedTarget[msg.sender], "SwapEazi: caller is not an allowed bridge");
        _deliver(abi.decode(message, (DestinationOrder)), tokenSent, amount);
    }

    /// @notice LayerZero (Stargate, USDT0): the endpoint calls this after the OFT `from` credited this contract.
    function lzCompose(address from, bytes32, bytes calldata message, address, bytes calldata) external nonReentrant {
        require(isAllowedTarget[msg.sender] && isAllowedTarget[from], "SwapEazi: caller is not an allowed bridge");
        uint256 amount = uint256(bytes32(message[LZ_AMOUNT_START:LZ_AMOUNT_START + 32]));
        _deliver(abi.decode(message[LZ_COMPOSE_MSG_START:], (DestinationOrder)), IOFTToken(from).token(), amount);
    }

    /// @notice CCTP v2: receives a burn message whose destinationCaller is this contract, so the mint and the hook's
    /// order run in one transaction. Anyone (our relayer, a keeper, the user) may submit it with its attestation.
    function relayCctp(address transmitter, bytes calldata message, bytes calldata attestation) external nonReentrant {
        require(isAllowedTarget[transmitter], "SwapEazi: transmitter is not allowed");
        require(message.length > CCTP_HOOK_DATA_START, "SwapEazi: not a CCTP burn message with hook data");
        address mintRecipient =
            address(uint160(uint256(bytes32(message[CCTP_MINT_RECIPIENT_START:CCTP_MINT_RECIPIENT_START + 32]))));
        require(mintRecipient == address(this), "SwapEazi: message mints to another recipient");
        DestinationOrder memory order = abi.decode(message[CCTP_HOOK_DATA_START:], (DestinationOrder));
        uint256 before = order.token.balanceOf(address(this));
        require(IMessageTransmitterV2(transmitter).receiveMessage(message, attestation), "SwapEazi: CCTP receive failed");
        uint256 received = order.token.balanceOf(address(this)) - before;
        require(received > 0, "SwapEazi: nothing minted");
        _deliver(order, order.token, received);
    }

    /// @notice Runs a destination order's calls; callable only by this contract, so a failure reverts them all and
    /// leaves the bridged tokens here for the fallback.
    function runDestination(DestinationOrder calldata order) external returns (uint256 amountOut) {
        require(msg.sender == address(this), "SwapEazi: only the executor");
        _runCalls(order.calls);
        amountOut = order.tokenOut.balanceOf(address(this));
        require(amountOut >= order.minOut, "SwapEazi: output below minimum");
        order.tokenOut.safeTransfer(order.recipient, amountOut);
        _sweep(order.token, order.recipient);
    }

    /// @dev A delivery after the order's deadline runs none of its calls: the recipient gets the bridged token, as
    /// when the calls fail, so a late bridge neither swaps on a stale price nor leaves the tokens here.
    function _deliver(DestinationOrder memory order, address token, uint256 amount) private {
        require(order.recipient != address(0), "SwapEazi: order has no recipient");
        if (token != order.token) {
            _fallback(order, token, amount, bytes("SwapEazi: bridge delivered another token"));
        } else if (block.timestamp > order.deadline) {
            _fallback(order, token, amount, bytes("SwapEazi: destination order expired"));
        } else {
            try this.runDestination(order) returns (uint256 amountOut) {
                emit DestinationExecuted(order.ref, order.recipient, token, amount, order.tokenOut, amountOut);
            } catch (bytes memory reason) {
                _fallback(order, token, amount, reason);
            }
        }
    }

    /// @dev The destination swap could not meet its minimum (or failed, or came after the order's deadline): the
    /// recipient gets the bridged token.
    function _fallback(DestinationOrder memory order, address token, uint256 amount, bytes memory reason) private {
        uint256 held = token.balanceOf(address(this));
        if (held > 0) token.safeTransfer(order.recipient, held);
        emit DestinationFallback(order.ref, order.recipient, token, amount, reason);
    }

    function _runCalls(Call[] memory calls) private {
        for (uint256 k = 0; k < calls.length; k++) {
            Call memory call = calls[k];
            require(isAllowedTarget[call.target], "SwapEazi: call target is not allowed");
            bytes memory data = call.data;
            if (call.token != address(0)) {
                uint256 amount = call.token.balanceOf(address(this));
                require(amount > 0, "SwapEazi: nothing to spend");
                if (call.amountOffset != NO_PATCH) {
                    require(call.amountOffset + 32 <= data.length, "SwapEazi: amount offset outside calldata");
                    uint256 offset = call.amountOffset;
                    assembly ("memory-safe") {
                        mstore(add(add(data, 32), offset), amount)
                    }
                }
                call.token.safeApprove(call.target, amount);
            }
            (bool ok, bytes memory returned) = call.target.call{value: call.value}(data);
            if (!ok) {
                assembly ("memory-safe") {
                    revert(add(returned, 32), mload(returned))
                }
            }
            if (call.token != address(0)) call.token.safeApprove(call.target, 0);
        }
    }

    function _sweep(address token, address to) private {
        uint256 left = token.balanceOf(address(this));
        if (left > 0) token.safeTransfer(to, left);
    }
}
