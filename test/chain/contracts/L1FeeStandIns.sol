// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the OP-stack GasPriceOracle predeploy's one read the live market makes:
/// `getL1FeeUpperBound(unsignedTxSize)`, here a fixed fee plus a fee per byte a test sets (the real one prices the
/// size with the L1 base and blob fees and FastLZ's worst case). No constructor state, so its runtime code can be
/// placed at 0x4200…000F with anvil_setCode. Open to anyone: a test fixture.
contract StandInGasPriceOracle {
    uint256 private _fixedFee;
    uint256 private _feePerByte;
    bool private _failing;

    function setL1Fee(uint256 fixedFee, uint256 feePerByte) external {
        _fixedFee = fixedFee;
        _feePerByte = feePerByte;
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function getL1FeeUpperBound(uint256 unsignedTxSize) external view returns (uint256) {
        require(!_failing, "StandInGasPriceOracle: failing");
        return _fixedFee + _feePerByte * unsignedTxSize;
    }
}

/// @notice Stand-in for Arbitrum's ArbGasInfo precompile's `getPricesInWei()` and `getMinimumGasPrice()`: the L1 cost
/// of a transaction without calldata, the price of one L1 calldata byte and the minimum L2 base fee a test sets, the
/// ArbGas prices fixed. Placed at 0x…006C with anvil_setCode. Open to anyone: a test fixture.
contract StandInArbGasInfo {
    uint256 private _perL2Tx;
    uint256 private _perL1CalldataByte;
    uint256 private _minimumGasPrice;
    bool private _failing;

    function setL1Fee(uint256 perL2Tx, uint256 perL1CalldataByte) external {
        _perL2Tx = perL2Tx;
        _perL1CalldataByte = perL1CalldataByte;
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function setMinimumGasPrice(uint256 minimumGasPrice) external {
        _minimumGasPrice = minimumGasPrice;
    }

    function getPricesInWei() external view returns (uint256, uint256, uint256, uint256, uint256, uint256) {
        require(!_failing, "StandInArbGasInfo: failing");
        return (_perL2Tx, _perL1CalldataByte, 0, 0.01 gwei, 0, 0.01 gwei);
    }

    function getMinimumGasPrice() external view returns (uint256) {
        return _minimumGasPrice;
    }
}
