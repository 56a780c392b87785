/// The first mistake in a device profile: where it is (file, line, column, field path) and what was
/// expected. `description` reads `file:line: field: message`, like a compiler diagnostic.
public struct ProfileError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// The file could not be read (missing, unreadable, not UTF-8).
        case unreadable
        /// The text is not YAML (a scanner or parser error).
        case notYAML
        /// The file has no document (empty, or comments only).
        case empty
        /// A required field is absent.
        case missingField
        /// A key the schema does not know.
        case unknownKey
        /// The same key twice in one mapping.
        case duplicateKey
        /// A value of the wrong YAML type (a string where a number belongs, ...).
        case wrongType
        /// A value of the right type outside what is allowed (range, length, enum, format).
        case invalidValue
        /// Fields that are fine alone but disagree with each other.
        case inconsistent
    }

    public var kind: Kind
    /// The file name as given (or `<yaml>` when parsed from a string without a name).
    public var file: String
    /// 1-based line, when known.
    public var line: Int?
    /// 1-based column, when known.
    public var column: Int?
    /// Dotted path of the field (`capabilities.video.main.fps`; list items as `household[1]`);
    /// empty for the document as a whole.
    public var field: String
    /// What was expected and what was found.
    public var message: String

    public init(kind: Kind, file: String, line: Int?, column: Int?, field: String, message: String) {
        self.kind = kind
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": "
        if !field.isEmpty { s += field + ": " }
        return s + message
    }
}

/// A field that was read but does not apply to the rest of the profile, so it is ignored. Loading
/// still succeeds; `ipcemu profile check` and `ipcemu run` print it.
public struct ProfileWarning: Sendable, Equatable, CustomStringConvertible {
    /// The file name as given (or `<yaml>`).
    public var file: String
    public var line: Int?
    public var column: Int?
    /// Dotted path of the field (`behaviour.answerDelay`).
    public var field: String
    public var message: String

    public init(file: String, line: Int?, column: Int?, field: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.field = field
        self.message = message
    }

    /// `FILE:LINE: warning: FIELD: message`
    public var description: String {
        var s = file
        if let line { s += ":\(line)" }
        s += ": warning: "
        if !field.isEmpty { s += field + ": " }
        return s + message
    }
}
