import Foundation

/// Reads a CA certificate file given on the command line (`--cloud-ca`): PEM (the first
/// certificate in it) or DER. Returns the DER bytes the join machine pins TLS to.
public enum CloudCAFile {
    public enum Problem: Error, CustomStringConvertible {
        case unreadable(String)
        case notACertificate(String)

        public var description: String {
            switch self {
            case .unreadable(let why), .notACertificate(let why): why
            }
        }
    }

    public static func der(fromFile path: String) throws(Problem) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadable("cannot read the CA file '\(path)'")
        }
        guard data.count <= 1 << 20 else { throw .notACertificate("'\(path)' is \(data.count) bytes: not a CA certificate") }
        let bytes = [UInt8](data)
        let text = String(decoding: bytes, as: UTF8.self)
        if let begin = text.range(of: "-----BEGIN CERTIFICATE-----") {
            guard let end = text.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<text.endIndex) else {
                throw .notACertificate("'\(path)' has a BEGIN CERTIFICATE line without its END line")
            }
            let base64 = text[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace }
            guard let der = Data(base64Encoded: String(base64)), !der.isEmpty else {
                throw .notACertificate("'\(path)': the PEM certificate is not base64")
            }
            return [UInt8](der)
        }
        // DER: an ASN.1 SEQUENCE.
        guard bytes.first == 0x30, bytes.count > 16 else {
            throw .notACertificate("'\(path)' is neither a PEM nor a DER certificate")
        }
        return bytes
    }
}
