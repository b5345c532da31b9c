// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

import {IStandInToken, TokenOps} from "./StandInLib.sol";

function addressToBytes32(address account) pure returns (bytes32) {
    return bytes32(uint256(uint160(account)));
}

/// @notice Stand-in for Circle CCTP v2 TokenMessengerV2 on the source chain. Pulls `amount` of `burnToken` from the
/// caller, burns it (the token must have an open `burn(address,uint256)`, as TestToken does) and emits the real v2
/// `DepositForBurn` event. There is no burn limit and no MessageTransmitter: the attestation service is played by
/// `cctpMessageFromDepositForBurn` in test/chain/cctpMessage.ts, which turns this event into a v2 message (and by
/// test/lifecycle/attestationStandIn.ts, which serves it signed as Circle's API does).
/// The remote token messenger defaults to this contract's own address (Circle deploys TokenMessengerV2 at the same
/// address on every chain) unless set with `setRemoteTokenMessenger`.
contract TokenMessengerV2StandIn {
    uint32 public immutable localDomain;
    mapping(uint32 => bytes32) private _remoteTokenMessengers;

    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );

    constructor(uint32 localDomain_) {
        localDomain = localDomain_;
    }

    /// @notice Open to anyone: a test fixture.
    function setRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger) external {
        _remoteTokenMessengers[domain] = tokenMessenger;
    }

    function remoteTokenMessengers(uint32 domain) public view returns (bytes32) {
        bytes32 remote = _remoteTokenMessengers[domain];
        return remote == bytes32(0) ? addressToBytes32(address(this)) : remote;
    }

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, ""
        );
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        require(hookData.length > 0, "Hook data is empty");
        _depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, hookData
        );
    }

    function _depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes memory hookData
    ) private {
        require(amount > 0, "Amount must be nonzero");
        require(mintRecipient != bytes32(0), "Mint recipient must be nonzero");
        require(maxFee < amount, "Max fee must be less than amount");
        require(destinationDomain != localDomain, "Invalid destination domain");
        TokenOps.pull(burnToken, msg.sender, amount);
        IStandInToken(burnToken).burn(address(this), amount);
        emit DepositForBurn(
            burnToken,
            amount,
            msg.sender,
            mintRecipient,
            destinationDomain,
            remoteTokenMessengers(destinationDomain),
            destinationCaller,
            maxFee,
            minFinalityThreshold,
            hookData
        );
    }
}

/// @notice Stand-in for Circle CCTP v2 MessageTransmitterV2 (with TokenMessengerV2's minting folded in) on the
/// destination chain. `receiveMessage` first verifies the attestation as MessageTransmitterV2 does with a signature
/// threshold of one: a 65-byte ECDSA signature (r ‖ s ‖ v, low s, v 27 or 28) over keccak256(message) by the
/// configured `attester` (test/chain/cctpMessage.ts `attestCctpMessage` signs with the test attester's key), so an
/// unattested or wrongly attested message is refused as on chain. It then parses a v2 message carrying a
/// BurnMessageV2 body, enforces the destination domain, the destination caller and single use of the nonce, and
/// mints amount - feeExecuted of `token` (which must have an open `mint`) to the mint recipient. The message's
/// burnToken and recipient are recorded, not mapped: whatever was burnt, `token` is minted. Hook data is not
/// executed (CCTP v2 never executes it either; the destination caller does).
contract MessageTransmitterV2StandIn {
    uint32 public constant MESSAGE_VERSION = 1;
    uint32 public constant MESSAGE_BODY_VERSION = 1;
    uint256 private constant HEADER_LENGTH = 148;
    uint256 private constant BURN_BODY_LENGTH = 228;

    uint256 private constant SIGNATURE_LENGTH = 65;
    /// @dev secp256k1n / 2: a higher s is the malleable twin of a valid signature, refused as OpenZeppelin's ECDSA does.
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    uint32 public immutable localDomain;
    address public immutable token;
    /// @notice The one enabled attester (Circle's threshold is one signature per enabled attester up to the threshold).
    address public immutable attester;
    /// @notice 1 once a nonce has been received, as in MessageTransmitterV2.
    mapping(bytes32 => uint256) public usedNonces;

    struct Header {
        uint32 sourceDomain;
        uint32 destinationDomain;
        bytes32 nonce;
        bytes32 sender;
        bytes32 recipient;
        bytes32 destinationCaller;
        uint32 minFinalityThreshold;
        uint32 finalityThresholdExecuted;
    }

    struct BurnBody {
        bytes32 burnToken;
        bytes32 mintRecipient;
        uint256 amount;
        bytes32 messageSender;
        uint256 maxFee;
        uint256 feeExecuted;
        uint256 expirationBlock;
    }

    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);

    constructor(uint32 localDomain_, address token_, address attester_) {
        require(attester_ != address(0), "New attester must be nonzero");
        localDomain = localDomain_;
        token = token_;
        attester = attester_;
    }

    /// @param attestation The attester's signature over keccak256(message), as Circle's attestation service gives it.
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool success) {
        _verifyAttestation(message, attestation);
        require(message.length >= HEADER_LENGTH + BURN_BODY_LENGTH, "Invalid message: too short");
        require(uint32(bytes4(message[0:4])) == MESSAGE_VERSION, "Invalid message version");
        Header memory header = _header(message);
        require(header.destinationDomain == localDomain, "Invalid destination domain");
        require(
            header.destinationCaller == bytes32(0) || header.destinationCaller == addressToBytes32(msg.sender),
            "Invalid caller for message"
        );
        require(usedNonces[header.nonce] == 0, "Nonce already used");
        usedNonces[header.nonce] = 1;

        require(uint32(bytes4(message[148:152])) == MESSAGE_BODY_VERSION, "Invalid message body version");
        BurnBody memory body = _burnBody(message);
        address recipient = address(uint160(uint256(body.mintRecipient)));
        require(recipient != address(0), "Mint recipient must be nonzero");
        require(body.expirationBlock == 0 || body.expirationBlock > block.number, "Message expired and must be re-signed");
        require(body.feeExecuted <= body.maxFee, "Fee exceeds max fee");
        require(body.feeExecuted < body.amount, "Fee equals or exceeds amount");

        uint256 minted = body.amount - body.feeExecuted;
        IStandInToken(token).mint(recipient, minted);
        emit MessageReceived(
            msg.sender,
            header.sourceDomain,
            header.nonce,
            header.sender,
            header.finalityThresholdExecuted,
            message[HEADER_LENGTH:]
        );
        emit MintAndWithdraw(recipient, minted, token, body.feeExecuted);
        return true;
    }

    /// @dev MessageTransmitterV2's _verifyAttestationSignatures with one attester: the signature must recover, from
    /// the raw digest (no eth_sign prefix), to the enabled attester.
    function _verifyAttestation(bytes calldata message, bytes calldata attestation) private view {
        require(attestation.length == SIGNATURE_LENGTH, "Invalid attestation length");
        bytes32 r = bytes32(attestation[0:32]);
        bytes32 s = bytes32(attestation[32:64]);
        uint8 v = uint8(attestation[64]);
        require(uint256(s) <= MAX_S, "ECDSA: invalid signature 's' value");
        require(v == 27 || v == 28, "ECDSA: invalid signature 'v' value");
        address signer = ecrecover(keccak256(message), v, r, s);
        require(signer != address(0), "ECDSA: invalid signature");
        require(signer == attester, "Invalid signer for signature");
    }

    function _header(bytes calldata m) private pure returns (Header memory h) {
        h.sourceDomain = uint32(bytes4(m[4:8]));
        h.destinationDomain = uint32(bytes4(m[8:12]));
        h.nonce = bytes32(m[12:44]);
        h.sender = bytes32(m[44:76]);
        h.recipient = bytes32(m[76:108]);
        h.destinationCaller = bytes32(m[108:140]);
        h.minFinalityThreshold = uint32(bytes4(m[140:144]));
        h.finalityThresholdExecuted = uint32(bytes4(m[144:148]));
    }

    function _burnBody(bytes calldata m) private pure returns (BurnBody memory b) {
        b.burnToken = bytes32(m[152:184]);
        b.mintRecipient = bytes32(m[184:216]);
        b.amount = uint256(bytes32(m[216:248]));
        b.messageSender = bytes32(m[248:280]);
        b.maxFee = uint256(bytes32(m[280:312]));
        b.feeExecuted = uint256(bytes32(m[312:344]));
        b.expirationBlock = uint256(bytes32(m[344:376]));
    }
}

/// @notice The recipient side of Across's message protocol, as SpokePool calls it.
interface AcrossMessageHandler {
    function handleV3AcrossMessage(address tokenSent, uint256 amount, address relayer, bytes calldata message) external;
}

/// @notice Stand-in for an Across SpokePool. Origin side: `deposit` (bytes32 addressing) pulls inputAmount of the
/// input token from the caller and emits the real `FundsDeposited` event with an incrementing depositId; the
/// exclusivity parameter becomes a deadline as in SpokePool (0: none; up to one year: an offset from now; larger:
/// an absolute timestamp). Destination side: `fillRelay` plays the relayer's fill. Wrapped-native deposits are not
/// modelled: any ETH sent reverts.
contract SpokePoolStandIn {
    uint32 public constant MAX_EXCLUSIVITY_PERIOD_SECONDS = 31_536_000;
    /// @notice How old a quote timestamp may be, as SpokePool's depositQuoteTimeBuffer (one hour on mainnet).
    uint32 public constant DEPOSIT_QUOTE_TIME_BUFFER = 3600;

    uint256 public numberOfDeposits;

    /// @dev `deposit`'s arguments before `message`, in order.
    struct DepositArgs {
        bytes32 depositor;
        bytes32 recipient;
        bytes32 inputToken;
        bytes32 outputToken;
        uint256 inputAmount;
        uint256 outputAmount;
        uint256 destinationChainId;
        bytes32 exclusiveRelayer;
        uint32 quoteTimestamp;
        uint32 fillDeadline;
        uint32 exclusivityParameter;
    }

    /// @dev FundsDeposited's non-indexed fields before `message`, in event order.
    struct FundsDepositedData {
        bytes32 inputToken;
        bytes32 outputToken;
        uint256 inputAmount;
        uint256 outputAmount;
        uint32 quoteTimestamp;
        uint32 fillDeadline;
        uint32 exclusivityDeadline;
        bytes32 recipient;
        bytes32 exclusiveRelayer;
    }

    event FundsDeposited(
        bytes32 inputToken,
        bytes32 outputToken,
        uint256 inputAmount,
        uint256 outputAmount,
        uint256 indexed destinationChainId,
        uint256 indexed depositId,
        uint32 quoteTimestamp,
        uint32 fillDeadline,
        uint32 exclusivityDeadline,
        bytes32 indexed depositor,
        bytes32 recipient,
        bytes32 exclusiveRelayer,
        bytes message
    );
    /// @notice Stand-in only: what FundsDeposited does not carry verbatim.
    event DepositRecorded(uint256 indexed depositId, address indexed caller, uint32 exclusivityParameter, uint256 msgValue);
    /// @notice Stand-in only: one relayer fill.
    event RelayFilled(
        address indexed relayer, address indexed recipient, address outputToken, uint256 outputAmount, bytes message
    );

    /// @notice SpokePool's `deposit`, dispatched by `fallback` (below) on this selector.
    bytes4 public constant DEPOSIT_SELECTOR = bytes4(
        keccak256("deposit(bytes32,bytes32,bytes32,bytes32,uint256,uint256,uint256,bytes32,uint32,uint32,uint32,bytes)")
    );

    /// @notice Serves `deposit(bytes32 depositor, bytes32 recipient, bytes32 inputToken, bytes32 outputToken,
    /// uint256 inputAmount, uint256 outputAmount, uint256 destinationChainId, bytes32 exclusiveRelayer,
    /// uint32 quoteTimestamp, uint32 fillDeadline, uint32 exclusivityParameter, bytes message) payable`.
    /// @dev The legacy code generator cannot ABI-decode twelve parameters plus `bytes` (stack too deep, even with no
    /// body), and our compile helper does not use via-IR, so the function is dispatched here by hand. Its calldata is
    /// exactly the encoding of (DepositArgs, bytes): a static struct is encoded inline. test/chain/standIns.ts adds
    /// the `deposit` item to this contract's ABI.
    fallback() external payable {
        require(msg.data.length >= 4 && bytes4(msg.data[0:4]) == DEPOSIT_SELECTOR, "SpokePoolStandIn: unknown function");
        (DepositArgs memory args, bytes memory message) = abi.decode(msg.data[4:], (DepositArgs, bytes));
        _deposit(args, message);
    }

    receive() external payable {
        revert("SpokePoolStandIn: plain ETH transfers are not accepted");
    }

    function _deposit(DepositArgs memory args, bytes memory message) private {
        require(msg.value == 0, "MsgValueDoesNotMatchInputAmount: native deposits are not modelled");
        require(
            args.quoteTimestamp <= block.timestamp && block.timestamp - args.quoteTimestamp <= DEPOSIT_QUOTE_TIME_BUFFER,
            "InvalidQuoteTimestamp"
        );
        require(args.fillDeadline >= block.timestamp, "InvalidFillDeadline");
        address inputToken = _toAddress(args.inputToken);
        _toAddress(args.depositor);
        require(args.inputAmount > 0, "stand-in: inputAmount is zero");

        uint32 exclusivityDeadline = args.exclusivityParameter;
        if (exclusivityDeadline > 0) {
            if (exclusivityDeadline <= MAX_EXCLUSIVITY_PERIOD_SECONDS) {
                exclusivityDeadline += uint32(block.timestamp);
            }
            require(args.exclusiveRelayer != bytes32(0), "InvalidExclusiveRelayer");
        }

        TokenOps.pull(inputToken, msg.sender, args.inputAmount);
        uint256 depositId = numberOfDeposits++;

        // FundsDeposited has thirteen fields: its data is encoded as one static struct plus `message`, which is
        // byte-for-byte the flat encoding of its ten non-indexed fields, and logged by hand.
        bytes memory data = abi.encode(
            FundsDepositedData({
                inputToken: args.inputToken,
                outputToken: args.outputToken,
                inputAmount: args.inputAmount,
                outputAmount: args.outputAmount,
                quoteTimestamp: args.quoteTimestamp,
                fillDeadline: args.fillDeadline,
                exclusivityDeadline: exclusivityDeadline,
                recipient: args.recipient,
                exclusiveRelayer: args.exclusiveRelayer
            }),
            message
        );
        bytes32 topic0 = FundsDeposited.selector;
        uint256 destinationChainId = args.destinationChainId;
        bytes32 depositor = args.depositor;
        assembly ("memory-safe") {
            log4(add(data, 32), mload(data), topic0, destinationChainId, depositId, depositor)
        }
        emit DepositRecorded(depositId, msg.sender, args.exclusivityParameter, msg.value);
    }

    /// @notice Destination side: the caller (the relayer) pays outputAmount of outputToken to the recipient, then,
    /// when there is a message and the recipient has code, SpokePool calls
    /// recipient.handleV3AcrossMessage(outputToken, outputAmount, relayer, message); a revert there fails the fill.
    function fillRelay(address outputToken, uint256 outputAmount, address recipient, bytes calldata message) external {
        TokenOps.pullTo(outputToken, msg.sender, recipient, outputAmount);
        if (message.length > 0 && recipient.code.length > 0) {
            AcrossMessageHandler(recipient).handleV3AcrossMessage(outputToken, outputAmount, msg.sender, message);
        }
        emit RelayFilled(msg.sender, recipient, outputToken, outputAmount, message);
    }

    function _toAddress(bytes32 value) private pure returns (address) {
        require(uint256(value) >> 160 == 0, "InvalidBytes32: not an EVM address");
        return address(uint160(uint256(value)));
    }
}

/// @notice Stand-in for a Stargate v2 pool (taxi and bus) or a LayerZero OFT such as USDT0: `send` on the source
/// chain. Charges `feePpm` parts per million of the amount, removes dust below 6 shared decimals as OFTs do (nothing
/// for 6-decimal tokens), keeps fee.nativeFee and refunds any extra ETH to refundAddress. The message is not carried
/// anywhere: LayerZeroEndpointStandIn.deliver plays the destination.
contract StargateOftStandIn {
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

    struct MessagingReceipt {
        bytes32 guid;
        uint64 nonce;
        MessagingFee fee;
    }

    struct OFTReceipt {
        uint256 amountSentLD;
        uint256 amountReceivedLD;
    }

    struct OFTLimit {
        uint256 minAmountLD;
        uint256 maxAmountLD;
    }

    struct OFTFeeDetail {
        int256 feeAmountLD;
        string description;
    }

    uint8 public constant SHARED_DECIMALS = 6;

    address public immutable token;
    uint256 public immutable feePpm;
    uint256 public immutable decimalConversionRate;
    /// @notice What quoteSend answers for the native fee; settable by anyone (test fixture).
    uint256 public nativeFeeQuote;
    mapping(uint32 => uint64) public outboundNonce;

    event OFTSent(
        bytes32 indexed guid, uint32 dstEid, address indexed fromAddress, uint256 amountSentLD, uint256 amountReceivedLD
    );
    /// @notice Stand-in only: the full call.
    event SendRecorded(
        bytes32 indexed guid,
        address indexed sender,
        SendParam sendParam,
        MessagingFee fee,
        address refundAddress,
        uint256 msgValue
    );

    constructor(address token_, uint256 feePpm_) {
        require(feePpm_ <= 1_000_000, "feePpm above 1e6");
        token = token_;
        feePpm = feePpm_;
        uint8 decimals = IStandInToken(token_).decimals();
        decimalConversionRate = decimals > SHARED_DECIMALS ? 10 ** (decimals - SHARED_DECIMALS) : 1;
    }

    function setNativeFeeQuote(uint256 nativeFee) external {
        nativeFeeQuote = nativeFee;
    }

    function quoteSend(SendParam calldata, bool payInLzToken) external view returns (MessagingFee memory) {
        require(!payInLzToken, "stand-in: LZ token fees are not supported");
        return MessagingFee(nativeFeeQuote, 0);
    }

    function quoteOFT(SendParam calldata sendParam)
        external
        view
        returns (OFTLimit memory limit, OFTFeeDetail[] memory feeDetails, OFTReceipt memory receipt)
    {
        limit = OFTLimit(0, type(uint256).max);
        receipt = _receipt(sendParam.amountLD);
        feeDetails = new OFTFeeDetail[](1);
        feeDetails[0] = OFTFeeDetail(-int256(receipt.amountSentLD - receipt.amountReceivedLD), "stand-in fee");
    }

    function send(SendParam calldata sendParam, MessagingFee calldata fee, address refundAddress)
        external
        payable
        returns (MessagingReceipt memory msgReceipt, OFTReceipt memory oftReceipt)
    {
        require(msg.value >= fee.nativeFee, "insufficient native fee");
        require(fee.lzTokenFee == 0, "stand-in: LZ token fees are not supported");
        oftReceipt = _receipt(sendParam.amountLD);
        require(oftReceipt.amountReceivedLD >= sendParam.minAmountLD, "Stargate: slippage too high");
        TokenOps.pull(token, msg.sender, oftReceipt.amountSentLD);

        uint64 nonce = ++outboundNonce[sendParam.dstEid];
        bytes32 guid = keccak256(abi.encodePacked(nonce, block.chainid, address(this), sendParam.dstEid, sendParam.to));
        msgReceipt = MessagingReceipt(guid, nonce, MessagingFee(fee.nativeFee, 0));

        uint256 excess = msg.value - fee.nativeFee;
        if (excess > 0) {
            (bool ok,) = refundAddress.call{value: excess}("");
            require(ok, "stand-in: native refund failed");
        }
        emit OFTSent(guid, sendParam.dstEid, msg.sender, oftReceipt.amountSentLD, oftReceipt.amountReceivedLD);
        emit SendRecorded(guid, msg.sender, sendParam, fee, refundAddress, msg.value);
    }

    function _receipt(uint256 amountLD) private view returns (OFTReceipt memory receipt) {
        receipt.amountSentLD = amountLD - amountLD % decimalConversionRate;
        uint256 received = receipt.amountSentLD - receipt.amountSentLD * feePpm / 1_000_000;
        receipt.amountReceivedLD = received - received % decimalConversionRate;
    }
}

/// @notice The LayerZero v2 composer interface, as the endpoint calls it.
interface ILayerZeroComposer {
    function lzCompose(
        address from,
        bytes32 guid,
        bytes calldata message,
        address executor,
        bytes calldata extraData
    ) external payable;
}

/// @notice Stand-in for the destination side of a Stargate/OFT transfer: the LayerZero endpoint, the OApp's credit
/// and the executor's compose call in one. `deliver` credits amountLD of `token` to `to` (from this contract's own
/// balance when it holds enough, else by the token's open `mint`), then, when composeMsg is non-empty, queues the
/// compose as EndpointV2's sendCompose does (composeQueue[oapp][to][guid][0] = keccak256(message)) and runs it as
/// the LayerZero executor would, calling to.lzCompose(oapp, guid, message, msg.sender, "") with msg.value, with
/// message laid out as OFTComposeMsgCodec: nonce (8 bytes) | srcEid (4) | amountLD (32) | composeFrom (32) |
/// composeMsg. A compose that reverts (or runs out of the gas `composeGasLimit` allows, when set) does not undo the
/// credit: it stays queued and the endpoint emits LzComposeAlert, as the executor's lzComposeAlert does on chain;
/// anyone may then retry it with `lzCompose`, which clears the queue entry (single delivery) before calling.
contract LayerZeroEndpointStandIn {
    /// @dev EndpointV2's marker of a delivered compose.
    bytes32 private constant RECEIVED_MESSAGE_HASH = bytes32(uint256(1));

    uint64 public deliveries;
    /// @notice Gas each compose run by `deliver` gets; 0: all there is. A test fixture, settable by anyone.
    uint256 public composeGasLimit;
    mapping(address from => mapping(address to => mapping(bytes32 guid => mapping(uint16 index => bytes32 messageHash))))
        public composeQueue;

    event Delivered(
        bytes32 indexed guid,
        address indexed oapp,
        address indexed to,
        address token,
        uint256 amountLD,
        uint32 srcEid,
        uint64 nonce,
        bytes32 composeFrom,
        bytes composeMsg
    );
    /// @notice As the real endpoint emits after a successful lzCompose.
    event ComposeDelivered(address from, address to, bytes32 guid, uint16 index);
    /// @notice As the real endpoint emits when the executor reports a compose that failed (retryable).
    event LzComposeAlert(
        address indexed from,
        address indexed to,
        address indexed executor,
        bytes32 guid,
        uint16 index,
        uint256 gas,
        uint256 value,
        bytes message,
        bytes extraData,
        bytes reason
    );

    function setComposeGasLimit(uint256 gasLimit) external {
        composeGasLimit = gasLimit;
    }

    function deliver(
        address oapp,
        address token,
        address to,
        uint256 amountLD,
        uint32 srcEid,
        bytes32 composeFrom,
        bytes calldata composeMsg
    ) external payable returns (bytes32 guid) {
        uint64 nonce = ++deliveries;
        guid = keccak256(abi.encodePacked(nonce, srcEid, oapp, block.chainid, to));
        if (IStandInToken(token).balanceOf(address(this)) >= amountLD) TokenOps.push(token, to, amountLD);
        else IStandInToken(token).mint(to, amountLD);
        if (composeMsg.length > 0) {
            require(to.code.length > 0, "stand-in: compose target has no code");
            bytes memory message = abi.encodePacked(nonce, srcEid, amountLD, composeFrom, composeMsg);
            composeQueue[oapp][to][guid][0] = keccak256(message);
            uint256 gasLimit = composeGasLimit == 0 ? gasleft() : composeGasLimit;
            try this.runCompose{gas: gasLimit, value: msg.value}(oapp, to, guid, message, msg.sender) {
                composeQueue[oapp][to][guid][0] = RECEIVED_MESSAGE_HASH;
                emit ComposeDelivered(oapp, to, guid, 0);
            } catch (bytes memory reason) {
                emit LzComposeAlert(oapp, to, msg.sender, guid, 0, gasLimit, msg.value, message, "", reason);
            }
        }
        emit Delivered(guid, oapp, to, token, amountLD, srcEid, nonce, composeFrom, composeMsg);
    }

    /// @notice `deliver`'s compose call, run through an external call so a failure can be caught; only this contract.
    function runCompose(address from, address to, bytes32 guid, bytes calldata message, address executor) external payable {
        require(msg.sender == address(this), "stand-in: only the endpoint");
        ILayerZeroComposer(to).lzCompose{value: msg.value}(from, guid, message, executor, "");
    }

    /// @notice EndpointV2's lzCompose: delivers a queued compose once, to anyone who presents its message.
    function lzCompose(address from, address to, bytes32 guid, uint16 index, bytes calldata message, bytes calldata extraData)
        external
        payable
    {
        bytes32 expected = composeQueue[from][to][guid][index];
        require(expected != RECEIVED_MESSAGE_HASH && expected == keccak256(message), "LZ_ComposeNotFound");
        composeQueue[from][to][guid][index] = RECEIVED_MESSAGE_HASH;
        ILayerZeroComposer(to).lzCompose{value: msg.value}(from, guid, message, msg.sender, extraData);
        emit ComposeDelivered(from, to, guid, index);
    }
}

/// @notice A test receiver for Across messages and LayerZero composes: records every call and can be told to revert.
contract BridgeReceiverRecorder {
    bool public shouldRevert;

    event AcrossMessageHandled(
        address indexed caller, address tokenSent, uint256 amount, address relayer, bytes message, uint256 tokenBalance
    );
    event LzComposeHandled(
        address indexed caller, address from, bytes32 guid, bytes message, address executor, bytes extraData, uint256 msgValue
    );

    function setShouldRevert(bool value) external {
        shouldRevert = value;
    }

    function handleV3AcrossMessage(address tokenSent, uint256 amount, address relayer, bytes calldata message) external {
        require(!shouldRevert, "BridgeReceiverRecorder: told to revert");
        emit AcrossMessageHandled(
            msg.sender, tokenSent, amount, relayer, message, IStandInToken(tokenSent).balanceOf(address(this))
        );
    }

    function lzCompose(address from, bytes32 guid, bytes calldata message, address executor, bytes calldata extraData)
        external
        payable
    {
        require(!shouldRevert, "BridgeReceiverRecorder: told to revert");
        emit LzComposeHandled(msg.sender, from, guid, message, executor, extraData, msg.value);
    }
}
