// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the one read the live market makes of a Solidly-style router (Aerodrome, Velodrome v2):
/// `getReserves(tokenA, tokenB, stable, factory)`, the reserves of the pool the factory made for that pair and kind,
/// answered in the order the tokens were asked. Each pool keeps its reserves in sorted-token order, as a real pool
/// does, so a reader that asks in the wrong order gets them the wrong way round. No constructor state, so its runtime
/// code can be placed at the real router's address with anvil_setCode. Open to anyone: a test fixture.
contract StandInSolidlyReserves {
    struct Pool {
        uint256 reserve0;
        uint256 reserve1;
        bool exists;
    }

    mapping(bytes32 => Pool) private _pools;
    bool private _failing;

    /// @notice The pool of `tokenA` and `tokenB` (stable or not) made by `factory` holds these, given in that order.
    function setReserves(address tokenA, address tokenB, bool stable, address factory, uint256 reserveA, uint256 reserveB) external {
        bool isSorted = tokenA < tokenB;
        _pools[_key(tokenA, tokenB, stable, factory)] =
            isSorted ? Pool(reserveA, reserveB, true) : Pool(reserveB, reserveA, true);
    }

    /// @notice While set, every read reverts, as a paused or broken router would.
    function setFailing(bool failing) external {
        _failing = failing;
    }

    function getReserves(address tokenA, address tokenB, bool stable, address factory)
        external
        view
        returns (uint256 reserveA, uint256 reserveB)
    {
        require(!_failing, "StandInSolidlyReserves: failing");
        Pool memory pool = _pools[_key(tokenA, tokenB, stable, factory)];
        require(pool.exists, "StandInSolidlyReserves: no such pool");
        (reserveA, reserveB) = tokenA < tokenB ? (pool.reserve0, pool.reserve1) : (pool.reserve1, pool.reserve0);
    }

    function _key(address tokenA, address tokenB, bool stable, address factory) private pure returns (bytes32) {
        (address token0, address token1) = tokenA < tokenB ? (tokenA, tokenB) : (tokenB, tokenA);
        return keccak256(abi.encode(token0, token1, stable, factory));
    }
}
