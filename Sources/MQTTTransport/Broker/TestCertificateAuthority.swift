/// A throwaway certificate authority made with the `openssl` command, for TLS tests and for
/// `ipcemu run --tls` style experiments: a CA, a server certificate for 127.0.0.1/localhost,
/// and a client certificate. EC P-256 keys, valid for two days. Nothing here is secret.
public struct TestCertificateAuthority: Sendable, Equatable {
    public let directory: String
    /// The CA certificate clients trust (`MQTTTLSOptions.caFile`).
    public let caFile: String
    public let serverCertFile: String
    public let serverKeyFile: String
    /// A client certificate signed by the same CA (`MQTTTLSOptions.certFile` / `keyFile`).
    public let clientCertFile: String
    public let clientKeyFile: String

    /// Generates everything into `directory` (which must exist).
    public init(directory: String, openssl: String? = nil) throws(MosquittoBrokerError) {
        guard let tool = openssl ?? ChildProcess.find("openssl") else {
            throw .toolFailed("openssl not found (Debian package openssl)")
        }
        self.directory = directory
        caFile = directory + "/ca.crt"
        serverCertFile = directory + "/server.crt"
        serverKeyFile = directory + "/server.key"
        clientCertFile = directory + "/client.crt"
        clientKeyFile = directory + "/client.key"
        let caKey = directory + "/ca.key"
        let log = directory + "/openssl.log"
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]

        try ChildProcess.run(
            tool,
            ["req", "-x509"] + key + [
                "-keyout", caKey, "-out", caFile, "-days", "2", "-subj", "/CN=ipcemu test CA",
                "-addext", "basicConstraints=critical,CA:TRUE",
                "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], logPath: log)

        for (name, subject, usage) in [
            ("server", "/CN=127.0.0.1", "serverAuth"), ("client", "/CN=ipcemu-test-client", "clientAuth"),
        ] {
            let request = directory + "/\(name).csr"
            let extensions = directory + "/\(name).ext"
            try ChildProcess.run(
                tool,
                ["req"] + key + [
                    "-keyout", directory + "/\(name).key", "-out", request, "-subj", subject,
                ], logPath: log)
            var lines = ["basicConstraints=CA:FALSE", "extendedKeyUsage=\(usage)"]
            if name == "server" { lines.append("subjectAltName=IP:127.0.0.1,DNS:localhost") }
            try writeText(lines.joined(separator: "\n") + "\n", to: extensions)
            try ChildProcess.run(
                tool,
                [
                    "x509", "-req", "-in", request, "-CA", caFile, "-CAkey", caKey,
                    "-CAcreateserial", "-out", directory + "/\(name).crt", "-days", "2",
                    "-extfile", extensions,
                ], logPath: log)
        }
    }
}
