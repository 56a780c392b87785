import ControlAPI
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    @Suite("Token rule") struct Token {
        @Test("a non-loopback address without a token is refused at startup; loopback or with a token is fine")
        func startupRule() throws {
            let registry = DeviceRegistry()
            #expect(throws: ControlError.self) {
                try ControlServer(configuration: ControlServerConfiguration(host: "0.0.0.0", port: 0), registry: registry)
            }
            #expect(throws: ControlError.self) {
                try ControlServer(configuration: ControlServerConfiguration(host: "192.168.1.20", port: 0, token: ""), registry: registry)
            }
            #expect(throws: Never.self) {
                try ControlServer(configuration: ControlServerConfiguration(host: "0.0.0.0", port: 0, token: "s3cret"), registry: registry)
            }
            #expect(throws: Never.self) {
                try ControlServer(configuration: ControlServerConfiguration(host: "127.0.0.1", port: 0), registry: registry)
            }
            do {
                _ = try ControlServer(configuration: ControlServerConfiguration(host: "0.0.0.0", port: 0), registry: registry)
            } catch {
                #expect(error.field == "control-token")
                #expect(error.message.contains("requires --control-token"))
            }
            #expect(throws: ControlError.self) { try ControlServerConfiguration(address: "localhost", token: nil) }
            #expect(try ControlServerConfiguration(address: "[::1]:81", token: nil).isLoopback)
        }

        @Test("with a token, every request needs it: none or a wrong one gets 401")
        func requestsNeedTheToken() async throws {
            try await withControl(token: "s3cret") { f in
                let anonymous = try ControlHTTPClient(baseURL: f.server.url)
                for path in ["/api/devices", "/metrics", "/", "/openapi.yaml", f.base + "/journal"] {
                    let r = try await anonymous.request("GET", path)
                    #expect(r.status == 401, "\(path)")
                    #expect(r.json?["field"]?.string == "Authorization")
                }
                let press = try await anonymous.request("POST", f.base + "/press")
                #expect(press.status == 401)
                #expect(await f.phase() == .idle)
                let wrong = try ControlHTTPClient(baseURL: f.server.url, token: "s3cre")
                #expect(try await wrong.request("GET", "/api/devices").status == 401)
                #expect(try await f.request("GET", "/api/devices").status == 200)
                #expect(try await anonymous.request("GET", "/api/devices?token=s3cret").status == 200)
            }
        }
    }
}
