// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the one read the live market makes of a balance-model pool (Curve plain and NG, PancakeSwap
/// stable): `balances(uint256 i)`, the pool's balance of coin i in atomic units. It holds no constructor state, so its
/// runtime code can be placed at a real pool's address with anvil_setCode and its balances set afterwards. Open to
/// anyone: a test fixture, not access-controlled.
contract StandInPoolBalances {
    uint256[] private _balances;
    bool private _failing;
    uint256 private _priceOracle;
    bool private _isPriceOracleFailing;

    event BalancesSet(uint256[] balances);

    function setBalances(uint256[] calldata balances_) external {
        _balances = balances_;
        emit BalancesSet(balances_);
    }

    /// @notice While set, every read reverts, as a paused or broken pool would.
    function setFailing(bool failing) external {
        _failing = failing;
    }

    /// @notice What a Curve stableswap-ng pool answers as its EMA `price_oracle(i)` (coin i + 1 in coin 0, 18
    /// decimals): one price for every i; never set, 1e18 (a pool at peg).
    function setPriceOracle(uint256 price) external {
        _priceOracle = price;
    }

    function setPriceOracleFailing(bool failing) external {
        _isPriceOracleFailing = failing;
    }

    function price_oracle(uint256 i) external view returns (uint256) {
        require(!_isPriceOracleFailing, "StandInPoolBalances: price_oracle failing");
        require(i + 1 < _balances.length, "StandInPoolBalances: coin index out of range");
        return _priceOracle == 0 ? 1e18 : _priceOracle;
    }

    function balances(uint256 i) external view returns (uint256) {
        require(!_failing, "StandInPoolBalances: failing");
        require(i < _balances.length, "StandInPoolBalances: coin index out of range");
        return _balances[i];
    }
}
