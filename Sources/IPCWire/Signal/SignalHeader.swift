/// `header.type` of a 302 message (PROTOCOL.md 4).
public enum SignalType: String, Sendable, CaseIterable, Hashable {
    /// App -> device.
    case offer
    /// Device -> app.
    case answer
    /// Both ways.
    case candidate
    /// Both ways.
    case disconnect
    /// App -> device: switch the link between main and sub stream.
    case resolution
}

/// The `header` of a 302 message minus its `type` (which `SignalBody` carries).
/// Note the spelling on the wire: `sessionid`, lower case, the same id as 308's `sessionId`.
public struct SignalHeader: Sendable, Equatable, Hashable {
    /// Sender: an app user id, or the devId.
    public var from: String
    /// Receiver.
    public var to: String
    /// The call session id (`sessionid` on the wire).
    public var sessionId: String
    /// `sub_dev_id`; "" when absent.
    public var subDevId: String
    /// `moto_id`, the relay id: a reply echoes the one it got. "" when absent.
    public var motoId: String
    /// `tid`; "" when absent.
    public var tid: String

    public init(from: String, to: String, sessionId: String, subDevId: String = "", motoId: String = "", tid: String = "") {
        self.from = from
        self.to = to
        self.sessionId = sessionId
        self.subDevId = subDevId
        self.motoId = motoId
        self.tid = tid
    }

    /// The header of a reply: `from` and `to` swapped, everything else (session, `moto_id`,
    /// `sub_dev_id`, `tid`) echoed.
    public func reply() -> SignalHeader {
        SignalHeader(from: to, to: from, sessionId: sessionId, subDevId: subDevId, motoId: motoId, tid: tid)
    }

    /// Reads `header`: `type`, `from`, `to`, `sessionid` required; `sub_dev_id`, `moto_id`,
    /// `tid` optional strings.
    static func decode(_ r: JSONObjectReader) throws(WireError) -> (SignalType, SignalHeader) {
        let typeName = try r.string("type")
        guard let type = SignalType(rawValue: typeName) else {
            throw .invalidValue(field: r.fieldPath("type"), value: "'\(typeName)'",
                                expected: "offer, answer, candidate, disconnect or resolution")
        }
        let header = SignalHeader(
            from: try r.string("from"), to: try r.string("to"), sessionId: try r.string("sessionid"),
            subDevId: try r.optionalString("sub_dev_id") ?? "", motoId: try r.optionalString("moto_id") ?? "",
            tid: try r.optionalString("tid") ?? "")
        return (type, header)
    }

    func json(type: SignalType) -> JSONValue {
        .object([
            "type": .string(type.rawValue), "from": .string(from), "to": .string(to),
            "sessionid": .string(sessionId), "sub_dev_id": .string(subDevId),
            "moto_id": .string(motoId), "tid": .string(tid),
        ])
    }
}
