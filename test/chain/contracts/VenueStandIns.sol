// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IStandInToken, RateBook, TokenOps} from "./StandInLib.sol";
import {MentoTradingLimitsBook} from "./MentoTradingLimits.sol";

/// @notice Stand-in for Uniswap v3 SwapRouter02 (IV3SwapRouter, no deadline in the params) and PancakeSwap v3
/// SmartRouter, which share `exactInputSingle`. Pulls `amountIn` of `tokenIn` from the caller, pays `tokenOut` to
/// `recipient` at the RateBook rate. As in SwapRouter02, recipient address(1) means msg.sender and address(2) means
/// the router itself. The fee tier and sqrtPriceLimitX96 are only recorded. amountIn 0 (SwapRouter02's
/// "use the router's balance") is not modelled and reverts. Any ETH sent is kept, as the real router keeps it until
/// `refundETH`.
contract UniswapV3RouterStandIn is RateBook {
    struct ExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint24 fee;
        address recipient;
        uint256 amountIn;
        uint256 amountOutMinimum;
        uint160 sqrtPriceLimitX96;
    }

    address private constant MSG_SENDER = address(1);
    address private constant ADDRESS_THIS = address(2);

    event ExactInputSingleCalled(
        address indexed sender, ExactInputSingleParams params, uint256 msgValue, address paidTo, uint256 amountOut
    );

    function exactInputSingle(ExactInputSingleParams calldata params) external payable returns (uint256 amountOut) {
        require(params.amountIn != 0, "stand-in: amountIn 0 (CONTRACT_BALANCE) is not supported");
        address recipient = params.recipient == MSG_SENDER
            ? msg.sender
            : params.recipient == ADDRESS_THIS ? address(this) : params.recipient;
        amountOut = _amountOut(params.tokenIn, params.tokenOut, params.amountIn);
        require(amountOut >= params.amountOutMinimum, "Too little received");
        TokenOps.pull(params.tokenIn, msg.sender, params.amountIn);
        _payOut(params.tokenOut, recipient, amountOut);
        emit ExactInputSingleCalled(msg.sender, params, msg.value, recipient, amountOut);
    }
}

/// @notice Stand-in for a Curve plain pool (3pool) or stableswap-ng pool: int128 coin indices, output to msg.sender.
/// (3pool's real `exchange` returns nothing; returning dy as stableswap-ng does is compatible with both ABIs.)
contract CurvePoolStandIn is RateBook {
    address[] private _coins;

    event ExchangeCalled(address indexed sender, int128 i, int128 j, uint256 dx, uint256 min_dy, uint256 dy);

    constructor(address[] memory coins_) {
        require(coins_.length >= 2 && coins_.length <= 8, "Curve: pool needs 2 to 8 coins");
        _coins = coins_;
    }

    function coins(uint256 i) external view returns (address) {
        require(i < _coins.length, "Curve: coin index out of range");
        return _coins[i];
    }

    function get_dy(int128 i, int128 j, uint256 dx) external view returns (uint256) {
        (address tokenIn, address tokenOut) = _pair(i, j);
        return _amountOut(tokenIn, tokenOut, dx);
    }

    function exchange(int128 i, int128 j, uint256 dx, uint256 min_dy) external returns (uint256 dy) {
        (address tokenIn, address tokenOut) = _pair(i, j);
        dy = _amountOut(tokenIn, tokenOut, dx);
        require(dy >= min_dy, "Exchange resulted in fewer coins than expected");
        TokenOps.pull(tokenIn, msg.sender, dx);
        _payOut(tokenOut, msg.sender, dy);
        emit ExchangeCalled(msg.sender, i, j, dx, min_dy, dy);
    }

    function _pair(int128 i, int128 j) private view returns (address, address) {
        require(i != j, "Curve: same coin");
        require(i >= 0 && uint256(int256(i)) < _coins.length, "Curve: coin index i out of range");
        require(j >= 0 && uint256(int256(j)) < _coins.length, "Curve: coin index j out of range");
        return (_coins[uint256(int256(i))], _coins[uint256(int256(j))]);
    }
}

/// @notice Stand-in for a PancakeSwap StableSwap two-pool: uint256 coin indices, `exchange` is payable and returns
/// nothing, output to msg.sender. Native coins are not modelled: any ETH sent reverts, as the real pool does for
/// ERC-20 coins.
contract PancakeStableSwapStandIn is RateBook {
    address[2] private _coins;

    event ExchangeCalled(address indexed sender, uint256 i, uint256 j, uint256 dx, uint256 min_dy, uint256 dy);

    constructor(address[] memory coins_) {
        require(coins_.length == 2, "StableSwap: two-pool needs exactly 2 coins");
        _coins = [coins_[0], coins_[1]];
    }

    function coins(uint256 i) external view returns (address) {
        require(i < 2, "StableSwap: coin index out of range");
        return _coins[i];
    }

    function get_dy(uint256 i, uint256 j, uint256 dx) external view returns (uint256) {
        (address tokenIn, address tokenOut) = _pair(i, j);
        return _amountOut(tokenIn, tokenOut, dx);
    }

    function exchange(uint256 i, uint256 j, uint256 dx, uint256 min_dy) external payable {
        require(msg.value == 0, "Inconsistent quantity");
        (address tokenIn, address tokenOut) = _pair(i, j);
        uint256 dy = _amountOut(tokenIn, tokenOut, dx);
        require(dy >= min_dy, "Exchange resulted in fewer coins than expected");
        TokenOps.pull(tokenIn, msg.sender, dx);
        _payOut(tokenOut, msg.sender, dy);
        emit ExchangeCalled(msg.sender, i, j, dx, min_dy, dy);
    }

    function _pair(uint256 i, uint256 j) private view returns (address, address) {
        require(i != j, "StableSwap: same coin");
        require(i < 2 && j < 2, "StableSwap: coin index out of range");
        return (_coins[i], _coins[j]);
    }
}

/// @notice Stand-in for a Solidly-style router (Aerodrome, Velodrome v2). Routes must chain (each hop's `to` is the
/// next hop's `from`); each hop is priced by the RateBook rate of its (from, to) pair, whatever `stable` and
/// `factory` say (both are recorded). Pulls amountIn of routes[0].from, pays the last amount to `to`.
contract SolidlyRouterStandIn is RateBook {
    struct Route {
        address from;
        address to;
        bool stable;
        address factory;
    }

    event SwapExactTokensForTokensCalled(
        address indexed sender,
        uint256 amountIn,
        uint256 amountOutMin,
        Route[] routes,
        address to,
        uint256 deadline,
        uint256[] amounts
    );

    function getAmountsOut(uint256 amountIn, Route[] memory routes) public view returns (uint256[] memory amounts) {
        require(routes.length >= 1, "INVALID_PATH");
        amounts = new uint256[](routes.length + 1);
        amounts[0] = amountIn;
        for (uint256 k = 0; k < routes.length; k++) {
            require(k == 0 || routes[k].from == routes[k - 1].to, "INVALID_PATH");
            amounts[k + 1] = _amountOut(routes[k].from, routes[k].to, amounts[k]);
        }
    }

    function swapExactTokensForTokens(
        uint256 amountIn,
        uint256 amountOutMin,
        Route[] calldata routes,
        address to,
        uint256 deadline
    ) external returns (uint256[] memory amounts) {
        require(deadline >= block.timestamp, "EXPIRED");
        amounts = getAmountsOut(amountIn, routes);
        uint256 amountOut = amounts[amounts.length - 1];
        require(amountOut >= amountOutMin, "INSUFFICIENT_OUTPUT_AMOUNT");
        TokenOps.pull(routes[0].from, msg.sender, amountIn);
        _payOut(routes[routes.length - 1].to, to, amountOut);
        emit SwapExactTokensForTokensCalled(msg.sender, amountIn, amountOutMin, routes, to, deadline, amounts);
    }
}

/// @notice Stand-in for the Balancer v2 Vault's `batchSwap` (balancer-v2-monorepo IVault.sol, selector 0x945bcec9), as
/// the catalogue's Gnosis venues call it. Modelled as the Vault does it, with its error codes: the deadline (BAL#508),
/// one limit per asset (BAL#103), steps whose indices fall inside `assets` (BAL#100), never one token for another
/// (BAL#509), an amount of 0 meaning all of the previous step's output, which must be the step's input (BAL#510,
/// BAL#511), net deltas checked against the limits (BAL#507: positive limits bound what the Vault takes, negative
/// ones what it must at least pay), the input pulled from and the output paid to `funds` once, after every step.
/// A step's pool must be registered (BAL#500) and hold both of its assets (BAL#521), so a wrong pool id or an asset
/// the pool does not hold (a Monerium v2 address where the pool holds the v1 front) reverts as on chain. Only
/// GIVEN_IN, ERC-20 assets and external balances are modelled, and the caller must be `funds.sender` (the real Vault
/// also admits approved relayers). Each step is priced by the RateBook rate of its (assetIn, assetOut); the pools'
/// own math and userData are not modelled. The whole call (after the executor patched its amount) is recorded.
contract BalancerVaultStandIn is RateBook {
    struct BatchSwapStep {
        bytes32 poolId;
        uint256 assetInIndex;
        uint256 assetOutIndex;
        uint256 amount;
        bytes userData;
    }

    struct FundManagement {
        address sender;
        bool fromInternalBalance;
        address payable recipient;
        bool toInternalBalance;
    }

    mapping(bytes32 => bool) public isRegistered;
    mapping(bytes32 => mapping(address => bool)) public poolHolds;

    event PoolRegistered(bytes32 indexed poolId, address[] tokens);
    /// @param data the calldata the Vault was called with, selector included
    event BatchSwapCalled(address indexed caller, bytes data, int256[] assetDeltas);

    /// @notice Test fixture: registers a pool id with tokens it holds (again to add tokens).
    function registerPool(bytes32 poolId, address[] calldata tokens) external {
        isRegistered[poolId] = true;
        for (uint256 k = 0; k < tokens.length; k++) {
            poolHolds[poolId][tokens[k]] = true;
        }
        emit PoolRegistered(poolId, tokens);
    }

    function batchSwap(
        uint8 kind,
        BatchSwapStep[] calldata swaps,
        address[] calldata assets,
        FundManagement calldata funds,
        int256[] calldata limits,
        uint256 deadline
    ) external payable returns (int256[] memory assetDeltas) {
        require(block.timestamp <= deadline, "BAL#508"); // SWAP_DEADLINE
        require(assets.length == limits.length, "BAL#103"); // INPUT_LENGTH_MISMATCH
        require(kind == 0, "stand-in: only GIVEN_IN (kind 0) swaps are supported");
        require(funds.sender == msg.sender, "BAL#401"); // SENDER_NOT_ALLOWED: no relayers in the stand-in
        require(
            !funds.fromInternalBalance && !funds.toInternalBalance, "stand-in: internal balances are not supported"
        );
        require(msg.value == 0, "stand-in: ETH is not supported");
        assetDeltas = _swapWithPools(swaps, assets);
        _settle(assets, limits, assetDeltas, funds.sender, funds.recipient);
        emit BatchSwapCalled(msg.sender, msg.data, assetDeltas);
    }

    function _swapWithPools(BatchSwapStep[] calldata swaps, address[] calldata assets)
        private
        view
        returns (int256[] memory deltas)
    {
        deltas = new int256[](assets.length);
        address previousToken;
        uint256 previousAmount;
        for (uint256 k = 0; k < swaps.length; k++) {
            BatchSwapStep calldata step = swaps[k];
            require(step.assetInIndex < assets.length && step.assetOutIndex < assets.length, "BAL#100"); // OUT_OF_BOUNDS
            address tokenIn = assets[step.assetInIndex];
            address tokenOut = assets[step.assetOutIndex];
            require(tokenIn != tokenOut, "BAL#509"); // CANNOT_SWAP_SAME_TOKEN
            require(tokenIn != address(0) && tokenOut != address(0), "stand-in: ETH is not supported");
            uint256 amountIn = step.amount;
            if (amountIn == 0) {
                require(k > 0, "BAL#510"); // UNKNOWN_AMOUNT_IN_FIRST_SWAP
                require(previousToken == tokenIn, "BAL#511"); // MALCONSTRUCTED_MULTIHOP_SWAP
                amountIn = previousAmount;
            }
            require(isRegistered[step.poolId], "BAL#500"); // INVALID_POOL_ID
            require(poolHolds[step.poolId][tokenIn] && poolHolds[step.poolId][tokenOut], "BAL#521"); // TOKEN_NOT_REGISTERED
            previousAmount = _amountOut(tokenIn, tokenOut, amountIn);
            previousToken = tokenOut;
            deltas[step.assetInIndex] += int256(amountIn);
            deltas[step.assetOutIndex] -= int256(previousAmount);
        }
    }

    function _settle(
        address[] calldata assets,
        int256[] calldata limits,
        int256[] memory deltas,
        address sender,
        address recipient
    ) private {
        for (uint256 i = 0; i < assets.length; i++) {
            int256 delta = deltas[i];
            require(delta <= limits[i], "BAL#507"); // SWAP_LIMIT
            if (delta > 0) TokenOps.pull(assets[i], sender, uint256(delta));
            else if (delta < 0) _payOut(assets[i], recipient, uint256(-delta));
        }
    }
}

/// @notice Stand-in for the Mento Broker (Celo) `swapIn`: output to msg.sender. Any non-zero exchange provider is
/// accepted; pricing is the RateBook rate of (tokenIn, tokenOut), and the exchange id keys the trading limits that
/// `swapIn` enforces as the Broker does (MentoTradingLimits.sol; none unless a test sets them).
contract MentoBrokerStandIn is RateBook, MentoTradingLimitsBook {
    event SwapInCalled(
        address indexed trader,
        address exchangeProvider,
        bytes32 exchangeId,
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 amountOutMin,
        uint256 amountOut
    );

    function getAmountOut(address exchangeProvider, bytes32, address tokenIn, address tokenOut, uint256 amountIn)
        external
        view
        returns (uint256)
    {
        require(exchangeProvider != address(0), "ExchangeProvider does not exist");
        return _amountOut(tokenIn, tokenOut, amountIn);
    }

    function swapIn(
        address exchangeProvider,
        bytes32 exchangeId,
        address tokenIn,
        address tokenOut,
        uint256 amountIn,
        uint256 amountOutMin
    ) external returns (uint256 amountOut) {
        require(exchangeProvider != address(0), "ExchangeProvider does not exist");
        amountOut = _amountOut(tokenIn, tokenOut, amountIn);
        require(amountOut >= amountOutMin, "amountOutMin not met");
        _guardTradingLimits(exchangeId, tokenIn, amountIn, tokenOut, amountOut);
        TokenOps.pull(tokenIn, msg.sender, amountIn);
        _payOut(tokenOut, msg.sender, amountOut);
        emit SwapInCalled(msg.sender, exchangeProvider, exchangeId, tokenIn, tokenOut, amountIn, amountOutMin, amountOut);
    }
}
