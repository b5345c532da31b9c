// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice The token surface the stand-ins use. `mint` and `burn` exist on the test tokens only.
interface IStandInToken {
    function balanceOf(address account) external view returns (uint256);
    function decimals() external view returns (uint8);
    function transfer(address to, uint256 value) external;
    function transferFrom(address from, address to, uint256 value) external;
    function mint(address to, uint256 amount) external;
    function burn(address from, uint256 amount) external;
}

/// @notice Token transfers that accept both bool-returning ERC-20s and USDT-style tokens that return nothing, and
/// bubble the token's own revert reason (e.g. "ERC20: insufficient allowance").
library TokenOps {
    function pull(address token, address from, uint256 amount) internal {
        _call(token, abi.encodeCall(IStandInToken.transferFrom, (from, address(this), amount)));
    }

    function pullTo(address token, address from, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IStandInToken.transferFrom, (from, to, amount)));
    }

    function push(address token, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IStandInToken.transfer, (to, amount)));
    }

    function _call(address token, bytes memory data) private {
        require(token.code.length > 0, "TokenOps: token has no code");
        (bool ok, bytes memory ret) = token.call(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 32), mload(ret))
            }
        }
        require(ret.length == 0 || (ret.length == 32 && abi.decode(ret, (bool))), "TokenOps: token returned false");
    }
}

/// @notice A settable price book shared by the swap stand-ins: out = amountIn * numerator / denominator, per ordered
/// token pair. Nothing is priced until a test calls `setRate`. Payouts come from the stand-in's own balance, which
/// tests fund by minting to it.
abstract contract RateBook {
    struct Rate {
        uint256 numerator;
        uint256 denominator;
    }

    mapping(address => mapping(address => Rate)) private _rates;

    event RateSet(address indexed tokenIn, address indexed tokenOut, uint256 numerator, uint256 denominator);

    /// @notice Open to anyone: a test fixture, not access-controlled.
    function setRate(address tokenIn, address tokenOut, uint256 numerator, uint256 denominator) external {
        require(denominator != 0, "rate denominator is zero");
        _rates[tokenIn][tokenOut] = Rate(numerator, denominator);
        emit RateSet(tokenIn, tokenOut, numerator, denominator);
    }

    function rateOf(address tokenIn, address tokenOut) external view returns (uint256 numerator, uint256 denominator) {
        Rate storage rate = _rates[tokenIn][tokenOut];
        return (rate.numerator, rate.denominator);
    }

    function _amountOut(address tokenIn, address tokenOut, uint256 amountIn) internal view returns (uint256) {
        Rate memory rate = _rates[tokenIn][tokenOut];
        require(rate.denominator != 0, "no rate");
        return amountIn * rate.numerator / rate.denominator;
    }

    function _payOut(address token, address to, uint256 amount) internal {
        require(IStandInToken(token).balanceOf(address(this)) >= amount, "stand-in: insufficient reserves of tokenOut");
        TokenOps.push(token, to, amount);
    }
}
