// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for a Chainlink AggregatorV3 feed (an FX or native-token price, or an L2 sequencer-uptime feed,
/// whose answer is 0 while the sequencer is up and 1 while it is down, and whose `startedAt` is when that began).
/// It holds no constructor state, so its runtime code can be placed at a real feed's address with anvil_setCode and
/// configured afterwards. Open to anyone: a test fixture, not access-controlled.
contract StandInAggregator {
    uint80 private _roundId;
    int256 private _answer;
    uint256 private _startedAt;
    uint256 private _updatedAt;
    uint8 private _decimals;
    string private _description;
    bool private _failing;

    event RoundSet(uint80 indexed roundId, int256 answer, uint256 startedAt, uint256 updatedAt);

    function configure(uint8 decimals_, string calldata description_) external {
        _decimals = decimals_;
        _description = description_;
    }

    /// @notice A new round: roundId + 1, `startedAt` = `updatedAt`.
    function setRound(int256 answer, uint256 updatedAt) external {
        _newRound(answer, updatedAt, updatedAt);
    }

    /// @notice A new round updated at this block's timestamp.
    function setRoundNow(int256 answer) external {
        _newRound(answer, block.timestamp, block.timestamp);
    }

    /// @notice A new round with its own `startedAt`: a sequencer-uptime feed's status and since when it holds.
    function setRoundStartedAt(int256 answer, uint256 startedAt, uint256 updatedAt) external {
        _newRound(answer, startedAt, updatedAt);
    }

    /// @notice While set, every read reverts, as a deprecated or broken feed would.
    function setFailing(bool failing) external {
        _failing = failing;
    }

    function decimals() external view returns (uint8) {
        require(!_failing, "StandInAggregator: failing");
        return _decimals;
    }

    function description() external view returns (string memory) {
        require(!_failing, "StandInAggregator: failing");
        return _description;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        require(!_failing, "StandInAggregator: failing");
        return (_roundId, _answer, _startedAt, _updatedAt, _roundId);
    }

    function _newRound(int256 answer, uint256 startedAt, uint256 updatedAt) private {
        _roundId += 1;
        _answer = answer;
        _startedAt = startedAt;
        _updatedAt = updatedAt;
        emit RoundSet(_roundId, answer, startedAt, updatedAt);
    }
}
