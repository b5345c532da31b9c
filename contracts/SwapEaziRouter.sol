// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {SwapEaziExecutor} from "./SwapEaziExecutor.sol";
import {Order, PermitSignature} from "./SwapEaziTypes.sol";
import {IERC20, IERC20Permit, TokenTransfers} from "./TokenTransfers.sol";

/// @title SwapEazi router
/// @notice The one contract a SwapEazi transaction calls. It pulls the signer's input (after an approval or an
/// EIP-2612 permit), sends SwapEazi's margin to the treasury, hands the rest to its executor, which runs the route's
/// calls against allow-listed venues and bridges, and emits the outcome with the swap reference.
/// @dev Only `msg.sender`'s tokens are ever pulled, and only here; the executor that makes arbitrary calls holds
/// no allowance. The owner manages the allow-list and the treasury and can move nobody's tokens.
contract SwapEaziRouter {
    using TokenTransfers for address;

    SwapEaziExecutor public immutable executor;
    address public owner;
    address public treasury;
    uint256 private _lock = 1;

    event Swapped(
        bytes32 indexed ref,
        address indexed sender,
        address indexed recipient,
        address tokenIn,
        uint256 amountIn,
        uint256 fee,
        address tokenOut,
        uint256 amountOut
    );
    event TargetSet(address indexed target, bool allowed);
    event TreasurySet(address indexed treasury);
    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);

    /// @notice The order's deadline passed before the transaction was mined: nothing was pulled or moved.
    error OrderExpired(bytes32 ref, uint256 deadline);

    modifier nonReentrant() {
        require(_lock == 1, "SwapEazi: reentrant call");
        _lock = 2;
        _;
        _lock = 1;
    }

    modifier onlyOwner() {
        require(msg.sender == owner, "SwapEazi: only the owner");
        _;
    }

    /// @dev Owner and treasury are arguments, not msg.sender: deployed through the CREATE2 proxy, the same
    /// arguments give the same address on every chain.
    constructor(address owner_, address treasury_) {
        require(owner_ != address(0) && treasury_ != address(0), "SwapEazi: zero owner or treasury");
        executor = new SwapEaziExecutor();
        owner = owner_;
        treasury = treasury_;
        emit OwnershipTransferred(address(0), owner_);
        emit TreasurySet(treasury_);
    }

    /// @notice Executes a route with the input the signer approved to this router.
    /// @return amountOut what the recipient received on this chain (0 when the route ends in a bridge deposit)
    function execute(Order calldata order) external payable nonReentrant returns (uint256 amountOut) {
        return _execute(order, msg.value);
    }

    /// @notice Executes several orders from one signer in one transaction (a disbursement: one source token, many
    /// recipients). Each order runs alone through the same path as `execute`: it pulls exactly its own `amountIn`,
    /// pays its own fee, and the executor holds only that order's tokens while its calls run, so an order's bridge
    /// deposit or transfer carries exactly its own amount. Each order gets the native value its calls send, and
    /// `msg.value` must be exactly their sum.
    /// @return amountsOut what each order's recipient received on this chain (0 for a bridge deposit)
    function executeBatch(Order[] calldata orders) external payable nonReentrant returns (uint256[] memory amountsOut) {
        require(orders.length > 0, "SwapEazi: batch has no orders");
        amountsOut = new uint256[](orders.length);
        uint256 valueLeft = msg.value;
        for (uint256 k = 0; k < orders.length; k++) {
            uint256 value = _callsValue(orders[k]);
            require(value <= valueLeft, "SwapEazi: value is below the orders' native fees");
            valueLeft -= value;
            amountsOut[k] = _execute(orders[k], value);
        }
        require(valueLeft == 0, "SwapEazi: value is above the orders' native fees");
    }

    /// @notice Executes a route, first granting the router the input with an EIP-2612 permit. A permit that fails
    /// (already used by someone who front-ran it) is ignored: the allowance check that follows decides.
    function executeWithPermit(Order calldata order, PermitSignature calldata permit)
        external
        payable
        nonReentrant
        returns (uint256 amountOut)
    {
        try IERC20Permit(order.tokenIn).permit(
            msg.sender, address(this), permit.value, permit.deadline, permit.v, permit.r, permit.s
        ) {} catch {}
        return _execute(order, msg.value);
    }

    /// @dev An order without calls is a plain transfer of the input, less the fee, to the recipient: it must name the
    /// input as its output, so the executor's output check (`minOut`) still applies. An order is refused in any block
    /// after its deadline, before anything is pulled; in a batch one expired order reverts them all.
    function _execute(Order calldata order, uint256 value) private returns (uint256 amountOut) {
        if (block.timestamp > order.deadline) revert OrderExpired(order.ref, order.deadline);
        require(order.recipient != address(0), "SwapEazi: order has no recipient");
        require(order.fee < order.amountIn, "SwapEazi: fee must be less than the input");
        require(order.calls.length > 0 || order.tokenOut == order.tokenIn, "SwapEazi: order has no calls");
        require(
            IERC20(order.tokenIn).allowance(msg.sender, address(this)) >= order.amountIn,
            "SwapEazi: approve the router for the input amount first"
        );
        require(
            order.tokenIn.balanceOf(msg.sender) >= order.amountIn, "SwapEazi: input balance is below the input amount"
        );
        if (order.fee > 0) order.tokenIn.safeTransferFrom(msg.sender, treasury, order.fee);
        order.tokenIn.safeTransferFrom(msg.sender, address(executor), order.amountIn - order.fee);
        amountOut = executor.run{value: value}(
            order.calls, order.tokenIn, order.tokenOut, order.minOut, order.recipient, msg.sender
        );
        emit Swapped(
            order.ref, msg.sender, order.recipient, order.tokenIn, order.amountIn, order.fee, order.tokenOut, amountOut
        );
    }

    function _callsValue(Order calldata order) private pure returns (uint256 value) {
        for (uint256 k = 0; k < order.calls.length; k++) value += order.calls[k].value;
    }

    /// @notice Allow or remove a venue, bridge or bridge endpoint the executor may call or accept deliveries from.
    function setTarget(address target, bool allowed) external onlyOwner {
        require(target != address(this) && target != address(executor), "SwapEazi: cannot target itself");
        executor.setTarget(target, allowed);
        emit TargetSet(target, allowed);
    }

    /// @notice Whether the executor may call `target`.
    function isAllowedTarget(address target) external view returns (bool) {
        return executor.isAllowedTarget(target);
    }

    function setTreasury(address treasury_) external onlyOwner {
        require(treasury_ != address(0), "SwapEazi: zero treasury");
        treasury = treasury_;
        emit TreasurySet(treasury_);
    }

    function transferOwnership(address newOwner) external onlyOwner {
        require(newOwner != address(0), "SwapEazi: zero owner");
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }
}
