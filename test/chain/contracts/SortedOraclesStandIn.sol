// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the two reads the live market makes of Mento's SortedOracles on Celo: `medianRate(rateFeedId)`
/// (numerator over denominator) and `medianTimestamp(rateFeedId)`. A rate feed never set answers (0, 0) and 0, as
/// one with no report does. No constructor state, so its runtime code can be placed at the real address with
/// anvil_setCode. Open to anyone: a test fixture.
contract StandInSortedOracles {
    struct Median {
        uint256 numerator;
        uint256 denominator;
        uint256 timestamp;
    }

    mapping(address => Median) private _medians;
    bool private _failing;

    function setMedian(address rateFeedId, uint256 numerator, uint256 denominator, uint256 timestamp) external {
        _medians[rateFeedId] = Median(numerator, denominator, timestamp);
    }

    /// @notice A median reported at this block's timestamp.
    function setMedianNow(address rateFeedId, uint256 numerator, uint256 denominator) external {
        _medians[rateFeedId] = Median(numerator, denominator, block.timestamp);
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    function medianRate(address rateFeedId) external view returns (uint256, uint256) {
        require(!_failing, "StandInSortedOracles: failing");
        Median storage median = _medians[rateFeedId];
        return (median.numerator, median.denominator);
    }

    function medianTimestamp(address rateFeedId) external view returns (uint256) {
        require(!_failing, "StandInSortedOracles: failing");
        return _medians[rateFeedId].timestamp;
    }
}
