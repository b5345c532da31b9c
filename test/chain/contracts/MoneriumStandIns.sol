// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {TestToken} from "./TestTokens.sol";

/// @notice Stand-in for a Monerium v2 token (EURe, GBPe; monerium/smart-contracts src/ControllerToken.sol), the ledger
/// behind both of its addresses. Its v1 front (MoneriumFrontStandIn) keeps no balances of its own: it calls the
/// `*_withCaller` functions here, which only the registered front may call and which act for the account that called
/// the front, so an account has one balance and one allowance per spender whichever address moves them, as on chain.
/// Everything else is TestToken's (ERC-20, EIP-2612 permit, open mint for tests).
contract MoneriumTokenStandIn is TestToken {
    address public frontend;

    constructor(string memory name_, string memory symbol_, uint8 decimals_) TestToken(name_, symbol_, decimals_, "2") {}

    modifier onlyFrontend() {
        require(msg.sender == frontend, "ControllerToken: caller is not the frontend");
        _;
    }

    /// @notice Test fixture: names the front once (the real token's owner sets it).
    function setFrontend(address frontend_) external {
        require(frontend == address(0), "stand-in: the frontend is already set");
        frontend = frontend_;
    }

    function isFrontend(address account) external view returns (bool) {
        return account == frontend;
    }

    function transfer_withCaller(address caller, address to, uint256 amount) external onlyFrontend returns (bool) {
        _transfer(caller, to, amount);
        return true;
    }

    /// @notice Spends the allowance `from` gave `caller`, whichever address it was given through.
    function transferFrom_withCaller(address caller, address from, address to, uint256 amount)
        external
        onlyFrontend
        returns (bool)
    {
        uint256 allowed = allowance[from][caller];
        require(allowed >= amount, "ERC20: insufficient allowance");
        if (allowed != type(uint256).max) _approve(from, caller, allowed - amount);
        _transfer(from, to, amount);
        return true;
    }

    function approve_withCaller(address caller, address spender, uint256 amount) external onlyFrontend returns (bool) {
        _approve(caller, spender, amount);
        return true;
    }
}

/// @notice Stand-in for a Monerium v1 token front end (monerium/smart-contracts src/tokenfrontend.sol): an ERC-20
/// address with no ledger, whose every read and write is the v2 token's, on behalf of msg.sender.
contract MoneriumFrontStandIn {
    MoneriumTokenStandIn public immutable controller;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(MoneriumTokenStandIn controller_) {
        controller = controller_;
    }

    function name() external view returns (string memory) {
        return controller.name();
    }

    function symbol() external view returns (string memory) {
        return controller.symbol();
    }

    function decimals() external view returns (uint8) {
        return controller.decimals();
    }

    function totalSupply() external view returns (uint256) {
        return controller.totalSupply();
    }

    function balanceOf(address account) external view returns (uint256) {
        return controller.balanceOf(account);
    }

    function allowance(address owner, address spender) external view returns (uint256) {
        return controller.allowance(owner, spender);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        require(controller.transfer_withCaller(msg.sender, to, value), "front: transfer failed");
        emit Transfer(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        require(controller.transferFrom_withCaller(msg.sender, from, to, value), "front: transferFrom failed");
        emit Transfer(from, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        require(controller.approve_withCaller(msg.sender, spender, value), "front: approve failed");
        emit Approval(msg.sender, spender, value);
        return true;
    }
}
