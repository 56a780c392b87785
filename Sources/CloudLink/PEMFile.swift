import Foundation

/// libmosquitto reads its CA from a PEM file, and the machine hands the CA over as DER
/// (`caArr[0]` of the iotdns answer, PROTOCOL.md 9.1): this writes one PEM file per distinct CA in a
/// folder of this process (mode 0700; nothing in it is secret).
enum PEMFile {
    static func pem(der: [UInt8]) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines: [Substring] = []
        var rest = Substring(base64)
        while !rest.isEmpty {
            lines.append(rest.prefix(64))
            rest = rest.dropFirst(64)
        }
        return "-----BEGIN CERTIFICATE-----\n" + lines.joined(separator: "\n") + "\n-----END CERTIFICATE-----\n"
    }

    /// The path of a PEM file holding `der`, written if needed.
    static func write(der: [UInt8]) throws -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325   // FNV-1a: names the file, nothing more
        for byte in der { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        let directory = NSTemporaryDirectory() + "ipcemu-cloud-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        let path = directory + "/ca-" + String(hash, radix: 16) + ".pem"
        if !FileManager.default.fileExists(atPath: path) {
            try pem(der: der).write(toFile: path, atomically: true, encoding: .utf8)
        }
        return path
    }
}
