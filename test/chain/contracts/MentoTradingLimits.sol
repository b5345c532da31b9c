// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Mento's trading-limit config of one limit id (mento-core ITradingLimits.Config): windows in seconds,
/// limits in whole tokens, flags L0 = 1, L1 = 2, LG = 4.
struct MentoLimitConfig {
    uint32 timestep0;
    uint32 timestep1;
    int48 limit0;
    int48 limit1;
    int48 limitGlobal;
    uint8 flags;
}

/// @notice Mento's trading-limit state of one limit id (mento-core ITradingLimits.State): when each window last
/// started, and the netflows in whole tokens.
struct MentoLimitState {
    uint32 lastUpdated0;
    uint32 lastUpdated1;
    int48 netflow0;
    int48 netflow1;
    int48 netflowGlobal;
}

interface IMentoLimitToken {
    function decimals() external view returns (uint8);
}

/// @notice The trading limits of Mento's Broker (v2) for the Broker stand-ins: per limit id
/// (`exchangeId ^ bytes32(uint256(uint160(token)))`) a config and a state, read through `tradingLimitsConfig` and
/// `tradingLimitsState` with the Broker's ABI, and enforced on a swap as the Broker's `guardTradingLimits` does
/// (written from mento-core's Broker.sol and TradingLimits.sol): tokenIn's netflow up by amountIn and tokenOut's down
/// by amountOut, in whole tokens (truncated, a nonzero flow below one token counting as one), an L0 or L1 window whose
/// time is up starting from 0, L1 moving only with L0, and the swap reverting ("L0 Exceeded", "L1 Exceeded", "LG
/// Exceeded") when an applicable |netflow| ends above its limit. A test fixture: the setters are open to anyone.
abstract contract MentoTradingLimitsBook {
    uint8 private constant L0 = 1;
    uint8 private constant L1 = 2;
    uint8 private constant LG = 4;

    mapping(bytes32 => MentoLimitConfig) private _limitConfigs;
    mapping(bytes32 => MentoLimitState) private _limitStates;
    bool private _limitsFailing;

    function tradingLimitId(bytes32 exchangeId, address token) public pure returns (bytes32) {
        return exchangeId ^ bytes32(uint256(uint160(token)));
    }

    /// @notice The config of a limit id, as the Broker's public mapping answers it.
    function tradingLimitsConfig(bytes32 limitId)
        external
        view
        returns (uint32 timestep0, uint32 timestep1, int48 limit0, int48 limit1, int48 limitGlobal, uint8 flags)
    {
        require(!_limitsFailing, "MentoTradingLimitsBook: failing");
        MentoLimitConfig memory config = _limitConfigs[limitId];
        return (config.timestep0, config.timestep1, config.limit0, config.limit1, config.limitGlobal, config.flags);
    }

    /// @notice The state of a limit id, as the Broker's public mapping answers it.
    function tradingLimitsState(bytes32 limitId)
        external
        view
        returns (uint32 lastUpdated0, uint32 lastUpdated1, int48 netflow0, int48 netflow1, int48 netflowGlobal)
    {
        require(!_limitsFailing, "MentoTradingLimitsBook: failing");
        MentoLimitState memory state = _limitStates[limitId];
        return (state.lastUpdated0, state.lastUpdated1, state.netflow0, state.netflow1, state.netflowGlobal);
    }

    /// @notice Sets the config and state of `token` in `exchangeId` as given (the Broker's configureTradingLimit
    /// also resets the windows; a test sets the state it needs directly).
    function setTradingLimit(bytes32 exchangeId, address token, MentoLimitConfig calldata config, MentoLimitState calldata state)
        external
    {
        bytes32 limitId = tradingLimitId(exchangeId, token);
        _limitConfigs[limitId] = config;
        _limitStates[limitId] = state;
    }

    /// @notice While failing, reading a config or state reverts (a swap still enforces them).
    function setTradingLimitsFailing(bool failing) external {
        _limitsFailing = failing;
    }

    function _guardTradingLimits(bytes32 exchangeId, address tokenIn, uint256 amountIn, address tokenOut, uint256 amountOut)
        internal
    {
        _guardTradingLimit(tradingLimitId(exchangeId, tokenIn), int256(amountIn), tokenIn);
        _guardTradingLimit(tradingLimitId(exchangeId, tokenOut), -int256(amountOut), tokenOut);
    }

    function _guardTradingLimit(bytes32 limitId, int256 deltaFlow, address token) private {
        MentoLimitConfig memory config = _limitConfigs[limitId];
        if (config.flags == 0) return;
        MentoLimitState memory state = _limitStates[limitId];
        if (deltaFlow != 0) {
            int256 units = deltaFlow / int256(10 ** uint256(IMentoLimitToken(token).decimals()));
            require(units <= type(int48).max && units >= type(int48).min, "MentoTradingLimitsBook: flow too large");
            int48 delta = units == 0 ? (deltaFlow > 0 ? int48(1) : int48(-1)) : int48(units);
            if (config.flags & L0 != 0) {
                if (block.timestamp > uint256(state.lastUpdated0) + config.timestep0) {
                    state.netflow0 = 0;
                    state.lastUpdated0 = uint32(block.timestamp);
                }
                state.netflow0 += delta;
                if (config.flags & L1 != 0) {
                    if (block.timestamp > uint256(state.lastUpdated1) + config.timestep1) {
                        state.netflow1 = 0;
                        state.lastUpdated1 = uint32(block.timestamp);
                    }
                    state.netflow1 += delta;
                }
            }
            if (config.flags & LG != 0) state.netflowGlobal += delta;
        }
        require(
            config.flags & L0 == 0 || (state.netflow0 <= config.limit0 && state.netflow0 >= -config.limit0), "L0 Exceeded"
        );
        require(
            config.flags & L1 == 0 || (state.netflow1 <= config.limit1 && state.netflow1 >= -config.limit1), "L1 Exceeded"
        );
        require(
            config.flags & LG == 0 || (state.netflowGlobal <= config.limitGlobal && state.netflowGlobal >= -config.limitGlobal),
            "LG Exceeded"
        );
        _limitStates[limitId] = state;
    }
}
