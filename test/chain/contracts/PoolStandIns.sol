// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the one read the live market makes of a balance-model pool (Curve plain and NG, PancakeSwap
/// stable): `balances(uint256 i)`, the pool's balance of coin i in atomic units. It holds no constructor state, so its
/// runtime code can be placed at a real pool's address with anvil_setCode and its balances set afterwards. Open to
/// anyone: a test fixture, not access-controlled.
contract StandInPoolBalances {
    uint256[] private _balances;
    bool private _failing;

    event BalancesSet(uint256[] balances);

    function setBalances(uint256[] calldata balances_) external {
        _balances = balances_;
        emit BalancesSet(balances_);
    }

    /// @notice While set, every read reverts, as a paused or broken pool would.
    function setFailing(bool failing) external {
        _failing = failing;
    }

    function balances(uint256 i) external view returns (uint256) {
        require(!_failing, "StandInPoolBalances: failing");
        require(i < _balances.length, "StandInPoolBalances: coin index out of range");
        return _balances[i];
    }
}
