// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

interface IERC20 {
    function balanceOf(address account) external view returns (uint256);
    function allowance(address owner, address spender) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
}

interface IERC20Permit {
    function permit(address owner, address spender, uint256 value, uint256 deadline, uint8 v, bytes32 r, bytes32 s)
        external;
}

/// ERC-20 calls that accept tokens returning no value (USDT) and reject a call to an address without code.
library TokenTransfers {
    function safeTransfer(address token, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transfer, (to, amount)), "SwapEazi: token transfer failed");
    }

    function safeTransferFrom(address token, address from, address to, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.transferFrom, (from, to, amount)), "SwapEazi: token transferFrom failed");
    }

    function safeApprove(address token, address spender, uint256 amount) internal {
        _call(token, abi.encodeCall(IERC20.approve, (spender, amount)), "SwapEazi: token approve failed");
    }

    function balanceOf(address token, address account) internal view returns (uint256) {
        return IERC20(token).balanceOf(account);
    }

    function _call(address token, bytes memory data, string memory reason) private {
        (bool ok, bytes memory returned) = token.call(data);
        require(
            ok && (returned.length == 0 ? token.code.length > 0 : returned.length == 32 && abi.decode(returned, (bool))),
            reason
        );
    }
}
