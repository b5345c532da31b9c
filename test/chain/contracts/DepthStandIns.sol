// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {MentoTradingLimitsBook} from "./MentoTradingLimits.sol";

/// @notice A two-token pool for the depth-venue stand-ins: a constant product over virtual reserves (the price and
/// depth a quote sees), of which only `available` of each token can actually be paid out, as a concentrated-liquidity
/// position holds less than its virtual reserves. The fee in ppm is taken from the input.
struct StandInDepthPool {
    address tokenA;
    address tokenB;
    uint256 reserveA;
    uint256 reserveB;
    uint256 availableA;
    uint256 availableB;
    uint256 feePpm;
    bool exists;
}

library StandInDepthMath {
    /// @notice What the pool pays for `amountIn` of `tokenIn`, and whether that would take more of the output than is
    /// available (then `amountOut` is all that is available).
    function quote(StandInDepthPool storage pool, address tokenIn, uint256 amountIn)
        internal
        view
        returns (uint256 amountOut, bool ranOut)
    {
        require(pool.exists, "StandInDepth: no such pool");
        bool inIsA = tokenIn == pool.tokenA;
        require(inIsA || tokenIn == pool.tokenB, "StandInDepth: token not in the pool");
        (uint256 reserveIn, uint256 reserveOut, uint256 available) =
            inIsA ? (pool.reserveA, pool.reserveB, pool.availableB) : (pool.reserveB, pool.reserveA, pool.availableA);
        uint256 net = amountIn * (1_000_000 - pool.feePpm) / 1_000_000;
        amountOut = reserveOut * net / (reserveIn + net);
        if (amountOut > available) return (available, true);
        return (amountOut, false);
    }

    function set(
        StandInDepthPool storage pool,
        address tokenA,
        address tokenB,
        uint256[2] calldata reserves,
        uint256[2] calldata available,
        uint256 feePpm
    ) internal {
        require(feePpm < 1_000_000, "StandInDepth: fee");
        pool.tokenA = tokenA;
        pool.tokenB = tokenB;
        pool.reserveA = reserves[0];
        pool.reserveB = reserves[1];
        pool.availableA = available[0];
        pool.availableB = available[1];
        pool.feePpm = feePpm;
        pool.exists = true;
    }
}

/// @notice Stand-in for Uniswap v3's QuoterV2 (and PancakeSwap v3's, the same interface): `quoteExactInputSingle`
/// over stand-in pools keyed by their two tokens and fee tier. As the real one, it is not a view function, a pool it
/// does not know reverts, and a swap that runs out of liquidity stops at the price limit and reports it in
/// `sqrtPriceX96After` without checking that the whole input was used. No constructor state, so its runtime code can
/// be placed at the real quoter's address with anvil_setCode. Open to anyone: a test fixture.
contract StandInQuoterV2 {
    using StandInDepthMath for StandInDepthPool;

    struct QuoteExactInputSingleParams {
        address tokenIn;
        address tokenOut;
        uint256 amountIn;
        uint24 fee;
        uint160 sqrtPriceLimitX96;
    }

    uint160 internal constant MIN_SQRT_RATIO = 4295128739;
    uint160 internal constant MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342;

    mapping(bytes32 => StandInDepthPool) private _pools;
    bool private _failing;
    /// @notice Bumped by every quote, so the function stays non-view as the real QuoterV2 is.
    uint256 private _quotes;

    function setPool(
        address tokenA,
        address tokenB,
        uint24 fee,
        uint256[2] calldata reserves,
        uint256[2] calldata available
    ) external {
        _pools[_key(tokenA, tokenB, fee)].set(tokenA, tokenB, reserves, available, fee);
    }

    /// @notice While set, every quote reverts, as a quoter with no pool behind it would.
    function setFailing(bool failing) external {
        _failing = failing;
    }

    function quoteExactInputSingle(QuoteExactInputSingleParams memory params)
        public
        returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)
    {
        require(!_failing, "StandInQuoterV2: failing");
        _quotes += 1;
        StandInDepthPool storage pool = _pools[_key(params.tokenIn, params.tokenOut, params.fee)];
        bool ranOut;
        (amountOut, ranOut) = pool.quote(params.tokenIn, params.amountIn);
        bool zeroForOne = params.tokenIn < params.tokenOut;
        if (ranOut) {
            uint160 limit = params.sqrtPriceLimitX96;
            if (limit == 0) limit = zeroForOne ? MIN_SQRT_RATIO + 1 : MAX_SQRT_RATIO - 1;
            sqrtPriceX96After = limit;
        } else {
            sqrtPriceX96After = _priceAfter(pool, params.tokenIn, params.amountIn, amountOut);
        }
        return (amountOut, sqrtPriceX96After, 1, 100_000);
    }

    /// @notice sqrt(token1 per token0) in Q64.96 after the swap, from the virtual reserves (never the limit).
    function _priceAfter(StandInDepthPool storage pool, address tokenIn, uint256 amountIn, uint256 amountOut)
        private
        view
        returns (uint160)
    {
        bool inIsA = tokenIn == pool.tokenA;
        uint256 a = inIsA ? pool.reserveA + amountIn : pool.reserveA - amountOut;
        uint256 b = inIsA ? pool.reserveB - amountOut : pool.reserveB + amountIn;
        (uint256 reserve0, uint256 reserve1) = pool.tokenA < pool.tokenB ? (a, b) : (b, a);
        return uint160(_sqrt((reserve1 << 96) / reserve0) << 48);
    }

    function _key(address tokenA, address tokenB, uint24 fee) private pure returns (bytes32) {
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        return keccak256(abi.encode(token0, token1, fee));
    }

    function _sqrt(uint256 x) private pure returns (uint256 y) {
        if (x == 0) return 0;
        uint256 z = x / 2 + 1;
        y = x;
        while (z < y) {
            y = z;
            z = (x / z + z) / 2;
        }
    }
}

/// @notice Stand-in for the Balancer v2 Vault's `queryBatchSwap`, GIVEN_IN only, over stand-in pools keyed by pool
/// id: each step trades in its pool (amount 0 takes all of the previous step's output), and the answer is the
/// Vault's delta per asset (positive in, negative out). A step that would pay more than its pool holds reverts, as
/// the Vault does. Placed at the Vault's address with anvil_setCode. Open to anyone: a test fixture.
contract StandInBalancerVault {
    using StandInDepthMath for StandInDepthPool;

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

    mapping(bytes32 => StandInDepthPool) private _pools;
    bool private _failing;
    uint256 private _queries;

    function setPool(
        bytes32 poolId,
        address tokenA,
        address tokenB,
        uint256 feePpm,
        uint256[2] calldata reserves,
        uint256[2] calldata available
    ) external {
        _pools[poolId].set(tokenA, tokenB, reserves, available, feePpm);
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function queryBatchSwap(uint8 kind, BatchSwapStep[] memory swaps, address[] memory assets, FundManagement memory)
        external
        returns (int256[] memory assetDeltas)
    {
        require(!_failing, "StandInBalancerVault: failing");
        require(kind == 0, "StandInBalancerVault: GIVEN_IN only");
        _queries += 1;
        assetDeltas = new int256[](assets.length);
        uint256 previous;
        for (uint256 s = 0; s < swaps.length; s++) {
            BatchSwapStep memory step = swaps[s];
            uint256 amountIn = step.amount == 0 ? previous : step.amount;
            (uint256 amountOut, bool ranOut) = _pools[step.poolId].quote(assets[step.assetInIndex], amountIn);
            require(!ranOut, "BAL#001");
            assetDeltas[step.assetInIndex] += int256(amountIn);
            assetDeltas[step.assetOutIndex] -= int256(amountOut);
            previous = amountOut;
        }
    }
}

/// @notice Stand-in for Mento's Broker `getAmountOut` over stand-in exchanges keyed by exchange id (the exchange
/// provider is not checked). An exchange that would pay more than it holds reverts. Placed at the Broker's address
/// with anvil_setCode. Answers the Broker's `tradingLimitsConfig` and `tradingLimitsState` from the limits a test
/// sets (MentoTradingLimits.sol); a quote, as the Broker's, does not check them. Open to anyone: a test fixture.
contract StandInMentoBroker is MentoTradingLimitsBook {
    using StandInDepthMath for StandInDepthPool;

    mapping(bytes32 => StandInDepthPool) private _exchanges;
    bool private _failing;

    function setExchange(
        bytes32 exchangeId,
        address tokenA,
        address tokenB,
        uint256 feePpm,
        uint256[2] calldata reserves,
        uint256[2] calldata available
    ) external {
        _exchanges[exchangeId].set(tokenA, tokenB, reserves, available, feePpm);
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function getAmountOut(address, bytes32 exchangeId, address tokenIn, address tokenOut, uint256 amountIn)
        external
        view
        returns (uint256 amountOut)
    {
        require(!_failing, "StandInMentoBroker: failing");
        StandInDepthPool storage exchange = _exchanges[exchangeId];
        require(tokenOut == exchange.tokenA || tokenOut == exchange.tokenB, "StandInMentoBroker: token not in the exchange");
        bool ranOut;
        (amountOut, ranOut) = exchange.quote(tokenIn, amountIn);
        require(!ranOut, "StandInMentoBroker: exceeds the bucket");
    }
}
