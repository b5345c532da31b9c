// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the one read the live market makes of an ERC-4626 vault (sUSDe): `convertToAssets(shares)`,
/// at an assets-per-share rate a test sets (18 decimals). No constructor state, so its runtime code can be placed at
/// the vault's address with anvil_setCode. Open to anyone: a test fixture.
contract StandInErc4626Rate {
    uint256 private _assetsPerShare;
    bool private _failing;

    function setAssetsPerShare(uint256 assetsPerShare) external {
        _assetsPerShare = assetsPerShare;
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function convertToAssets(uint256 shares) external view returns (uint256) {
        require(!_failing, "StandInErc4626Rate: failing");
        return (shares * _assetsPerShare) / 1e18;
    }
}
