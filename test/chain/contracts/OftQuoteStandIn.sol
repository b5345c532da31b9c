// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @notice Stand-in for the one read the live market makes of a LayerZero OFT (a Stargate v2 pool, a USDT0 OFT):
/// `quoteSend(sendParam, payInLzToken)`, the messaging fee `send` must carry. The fee is set per destination endpoint
/// id (a default for the others), and for the bus (`oftCmd` of one zero byte) apart from the taxi. No constructor
/// state, so its runtime code can be placed at the real OFT's address with anvil_setCode. Open to anyone: a test
/// fixture.
contract StandInOftQuote {
    struct SendParam {
        uint32 dstEid;
        bytes32 to;
        uint256 amountLD;
        uint256 minAmountLD;
        bytes extraOptions;
        bytes composeMsg;
        bytes oftCmd;
    }

    struct MessagingFee {
        uint256 nativeFee;
        uint256 lzTokenFee;
    }

    uint256 private _defaultFee;
    mapping(uint32 => uint256) private _fees;
    bool private _failing;
    uint256 private _composeFeePerByte;

    function setDefaultFee(uint256 nativeFee) external {
        _defaultFee = nativeFee;
    }

    function setFee(uint32 dstEid, uint256 nativeFee) external {
        _fees[dstEid] = nativeFee;
    }

    function setFailing(bool failing) external {
        _failing = failing;
    }

    /// @notice A send with a compose message costs this much more per byte of it (LayerZero prices a message by size).
    function setComposeFeePerByte(uint256 feePerByte) external {
        _composeFeePerByte = feePerByte;
    }

    function quoteSend(SendParam calldata sendParam, bool payInLzToken) external view returns (MessagingFee memory fee) {
        require(!_failing, "StandInOftQuote: failing");
        require(!payInLzToken, "StandInOftQuote: native fees only");
        require(sendParam.to != bytes32(0), "StandInOftQuote: no recipient");
        require(sendParam.amountLD > 0, "StandInOftQuote: no amount");
        uint256 nativeFee = _fees[sendParam.dstEid];
        if (nativeFee == 0) nativeFee = _defaultFee;
        // The bus fare is a tenth of the taxi's, as Stargate's buses share the message.
        if (sendParam.oftCmd.length == 1) nativeFee = nativeFee / 10;
        if (sendParam.composeMsg.length > 0) {
            // A compose runs only with gas for it: LayerZero's executor needs an lzCompose option.
            require(sendParam.extraOptions.length > 0, "StandInOftQuote: a compose without executor options");
            nativeFee += sendParam.composeMsg.length * _composeFeePerByte;
        }
        return MessagingFee(nativeFee, 0);
    }
}
