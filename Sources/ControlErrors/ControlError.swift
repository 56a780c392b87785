/// An error the control API answers with: an HTTP status, a message, and the request field it is
/// about (`{"error":"callType must be 1, 2 or 3","field":"callType"}`).
public struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    public var status: Int
    public var message: String
    public var field: String?

    public init(status: Int, _ message: String, field: String? = nil) {
        self.status = status
        self.message = message
        self.field = field
    }

    public static func badRequest(_ message: String, field: String?) -> ControlError {
        ControlError(status: 400, message, field: field)
    }

    public var description: String { message }
}
