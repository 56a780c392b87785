// swift-tools-version:6.1
// ipcemu: a Tuya-style "IPC with screen" video doorbell / control panel emulator.
// Layers (DESIGN.md): Wire -> CallEngine (sans-IO) -> Device/Fleet glue -> Control -> CLI.
// Libraries depend downwards only; the engine knows nothing of MQTT, GStreamer or files.
import Foundation
import PackageDescription

let package = Package(
    name: "ipcemu",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "ipcemu", targets: ["ipcemu"]),
        .library(name: "IPCWire", targets: ["IPCWire"]),
        .library(name: "CallEngine", targets: ["CallEngine"]),
        .library(name: "DeviceProfile", targets: ["DeviceProfile"]),
        .library(name: "MQTTTransport", targets: ["MQTTTransport"]),
        .library(name: "Camera", targets: ["Camera"]),
        .library(name: "Emulator", targets: ["Emulator"]),
        .library(name: "AppSimulator", targets: ["AppSimulator"]),
        .library(name: "ControlAPI", targets: ["ControlAPI"]),
        .library(name: "WebRTCLink", targets: ["WebRTCLink"]),
        // Virtual devices, app users and a broker inside another package's tests (issue 12).
        .library(name: "IPCEmuTesting", targets: ["IPCEmuTesting"]),
        .library(name: "TuyaCloud", targets: ["TuyaCloud"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        // The control API's code is generated from Sources/ControlAPISpec/openapi.yaml by
        // scripts/generate-openapi.sh and committed (docs/building.md): no generator in the build.
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0"),
    ],
    targets: [
        // MARK: Wire: envelopes, 308 call events, 302 WebRTC signalling, 309 probe, pv2.2/pv2.3.
        // AES-128 (ECB blocks, GCM), HMAC-SHA256, SHA-256 and MD5 come from the system's OpenSSL
        // libcrypto (already there for GStreamer's DTLS and libmosquitto) through a small C shim:
        // no TLS/crypto stack is compiled from source for them (issue 22, docs/building.md).
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "CWireCrypto", dependencies: ["CLibCrypto"]),
        .target(name: "IPCWire", dependencies: ["CWireCrypto"]),
        // MARK: Tuya cloud join (PROTOCOL.md 9): the SDK's signing and encryption as pure functions, the
        // sans-IO join machine, and the state file (docs/tuya-cloud.md).
        .target(
            name: "TuyaCloud",
            dependencies: ["IPCWire"]
        ),
        // MARK: HTTP(S) client: the cloud join's HTTPS, the pushes and the CLI's control API client,
        // over the system's libcurl (TLS through the system's OpenSSL) via a small C shim.
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .target(name: "CHTTPTransfer", dependencies: ["CCurl"]),
        .target(name: "HTTPTransfer", dependencies: ["CHTTPTransfer"]),
        // MARK: HTTP server: the control API, its event stream and the web console, on the system's
        // GNU libmicrohttpd (one thread per connection) via a small C shim (docs/building.md).
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        .target(name: "CHTTPServe", dependencies: ["CMicroHTTPD"]),
        .target(name: "HTTPServe", dependencies: ["CHTTPServe"]),
        // MARK: Tuya cloud link (PROTOCOL.md 9): runs TuyaCloud's join machine in real time (HTTPS
        // through HTTPTransfer, MQTT with TLS through MQTTTransport, the state file, timers), hands
        // the device link to the device, and draws the pairing QR code (libqrencode).
        .systemLibrary(
            name: "CQREncode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .target(
            name: "CloudLink",
            dependencies: [
                "TuyaCloud", "MQTTTransport", "CMosquitto", "DeviceProfile", "IPCWire", "CQREncode", "HTTPTransfer",
            ]
        ),
        // MARK: Call engine: the sans-IO state machine of PROTOCOL.md section 3, both roles.
        .target(name: "CallEngine", dependencies: ["IPCWire"]),
        // MARK: Device profiles: YAML schema and validation.
        .target(
            name: "DeviceProfile",
            dependencies: ["IPCWire", .product(name: "Yams", package: "Yams")]
        ),
        // MARK: MQTT over libmosquitto, and the private broker process.
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        .target(
            name: "MQTTTransport",
            dependencies: ["CMosquitto", .product(name: "HeapModule", package: "swift-collections")]
        ),
        // MARK: Camera: V4L2 (through a C shim), stamped test pattern, H.264 clip loop.
        .target(name: "CV4L2", linkerSettings: [.linkedLibrary("v4l2")]),
        .target(name: "Camera", dependencies: ["CV4L2", "CGStreamer", "CGstCore"]),
        // GStreamer through a system library and a header-only shim (generic wrappers: push to
        // appsrc, pull from appsink, read the bus); WebRTCLink extends it.
        .systemLibrary(
            name: "CGStreamer",
            pkgConfig: "gstreamer-app-1.0",
            providers: [.apt(["libgstreamer1.0-dev", "libgstreamer-plugins-base1.0-dev"])]
        ),
        // What both GStreamer shims share (the Camera's pipelines and CGstWebRTC): GStreamer's one
        // initialisation, and parsing a gst-launch description with the parser's error as text. Its
        // C file needs GStreamer's headers (through CGStreamer); its public header includes none.
        .target(name: "CGstCore", dependencies: ["CGStreamer"]),
        // The vivid integration test's guest program, and the test pattern's CPU benchmark.
        .executableTarget(name: "ipcemu-camera-check", dependencies: ["Camera"]),
        // MARK: WebRTC media (PROTOCOL.md section 4): webrtcbin through a C shim, both roles.
        // The shim's C file needs GStreamer's, GLib's and libnice's headers; its public header
        // includes none of them. Each library comes through a system library target named by
        // pkg-config (no unsafe flags, no hard-coded paths), so SwiftPM accepts ipcemu as a
        // versioned dependency of another package: their cflags reach the C compile and their libs
        // the link. One pkg-config name per system library target.
        .systemLibrary(
            name: "CGStreamerWebRTC",
            pkgConfig: "gstreamer-webrtc-1.0",
            providers: [.apt(["libgstreamer-plugins-bad1.0-dev"])]
        ),
        .systemLibrary(
            name: "CGStreamerSDP",
            pkgConfig: "gstreamer-sdp-1.0",
            providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CGStreamerVideo",
            pkgConfig: "gstreamer-video-1.0",
            providers: [.apt(["libgstreamer-plugins-base1.0-dev"])]
        ),
        .systemLibrary(
            name: "CLibNice",
            pkgConfig: "nice",
            providers: [.apt(["libnice-dev"])]
        ),
        .target(
            name: "CGstWebRTC",
            dependencies: ["CGstCore", "CGStreamer", "CGStreamerWebRTC", "CGStreamerSDP", "CGStreamerVideo", "CLibNice"]
        ),
        // IPCWire: the fmp4Stream data channel's framing (PROTOCOL.md 7), which the fMP4 muxer uses.
        .target(name: "WebRTCLink", dependencies: ["CGstWebRTC", "IPCWire"]),
        // MARK: Glue: what runs an engine in real time (clock, timers, event log); one actor per
        // device; and the app side that mirrors the SDK.
        .target(
            name: "CallRuntime",
            dependencies: [
                "IPCWire", "CallEngine", .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // MARK: Deterministic simulation of the whole call system on a simulated clock (issue 23,
        // docs/simulation.md): the real engines and codecs, a faulty broker, one seed.
        .target(name: "Simulation", dependencies: ["IPCWire", "CallEngine"]),
        .target(
            name: "Emulator",
            dependencies: ["IPCWire", "CallEngine", "CallRuntime", "DeviceProfile", "MQTTTransport", "Camera", "WebRTCLink",
                           // Pushes of a press (PROTOCOL.md 8.8): one POST per household user.
                           "HTTPTransfer"]
        ),
        .target(
            name: "AppSimulator",
            dependencies: ["IPCWire", "CallEngine", "CallRuntime", "MQTTTransport", "Camera", "WebRTCLink"]
        ),
        // MARK: Testing library: virtual devices, fleets, app users and a broker for other
        // packages' tests, on the public API of Device, AppUser and MosquittoBroker.
        .target(
            name: "IPCEmuTesting",
            dependencies: [
                "IPCWire", "CallEngine", "CallRuntime", "DeviceProfile", "MQTTTransport", "Emulator", "AppSimulator",
                "WebRTCLink",
            ]
        ),
        // MARK: Metrics: the /metrics exposition on swift-prometheus (one registry per registry of devices).
        .target(name: "IPCMetrics", dependencies: ["CallEngine", .product(name: "Prometheus", package: "swift-prometheus")]),
        // MARK: The call journal (JSON Lines per device or per fleet process), and the error the
        // control layer answers with (shared by the journal and the HTTP API).
        .target(name: "ControlErrors"),
        .target(name: "CallJournal", dependencies: ["IPCWire", "CallEngine", "CallRuntime", "ControlErrors"]),
        // MARK: Control: HTTP API, web console.
        .target(
            name: "ControlAPI",
            dependencies: [
                "IPCWire", "CallEngine", "CallRuntime", "DeviceProfile", "MQTTTransport", "Emulator", "AppSimulator", "IPCMetrics",
                "CallJournal", "ControlErrors", "WebRTCLink",
                .product(name: "Logging", package: "swift-log"),
                "ControlAPISpec",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                // The server (MicroHTTPServerTransport) and the CLI's client transport (TransferClientTransport).
                "HTTPServe", "HTTPTransfer",
            ]
        ),
        // The control API spec first (docs/control.md): openapi.yaml, and what swift-openapi-generator
        // makes of it (types, server protocol, client; package access) in Generated/, made by
        // scripts/generate-openapi.sh (its --check in CI fails when they differ). The YAML is also
        // embedded, to be served at /openapi.yaml (the binary alone is installed, no resource bundle).
        .target(
            name: "ControlAPISpec",
            dependencies: [.product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            // The generator's output (Generated/) is not ours: scripts/test.sh leaves its warnings
            // (unused imports in files of empty namespaces) out of the check.
            exclude: ["openapi-generator-config.yaml"],
            resources: [.embedInCode("openapi.yaml")]
        ),
        // MARK: Scenarios: scripted QA campaigns (schema, runner, JUnit and HTML reports).
        .target(
            name: "Scenario",
            dependencies: [
                "IPCWire", "CallEngine", "CallRuntime", "DeviceProfile", "MQTTTransport", "Emulator", "AppSimulator",
                // `--simulated`: the scenario's devices and apps inside ScenarioSimulation.
                "Simulation",
                .product(name: "Yams", package: "Yams"),
            ]
        ),
        // MARK: The command line.
        .executableTarget(
            name: "ipcemu",
            dependencies: [
                "IPCWire", "CallEngine", "CallRuntime", "DeviceProfile", "MQTTTransport", "Camera",
                "Emulator", "AppSimulator", "WebRTCLink", "ControlAPI", "ControlAPISpec", "Scenario",
                "TuyaCloud", "CloudLink", "Simulation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
            ]
        ),
        // MARK: Tests
        // The fake V4L2 driver behind the injectable ioctl table (camera and device tests).
        .target(name: "CameraTestSupport", dependencies: ["Camera", "CV4L2", "TestSupport"], path: "Tests/CameraTestSupport"),
        .target(
            name: "TestSupport",
            dependencies: ["MQTTTransport", "IPCWire", "HTTPTransfer"],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "IPCWireTests", dependencies: ["IPCWire", "TestSupport"]),
        .testTarget(name: "CallEngineTests", dependencies: ["CallEngine", "IPCWire"]),
        .testTarget(name: "TuyaCloudTests", dependencies: ["TuyaCloud", "IPCWire"]),
        .testTarget(name: "CallRuntimeTests", dependencies: ["CallRuntime", "CallEngine", "IPCWire"]),
        .testTarget(name: "SimulationTests", dependencies: ["Simulation", "CallEngine", "IPCWire", "TestSupport"]),
        .testTarget(
            name: "EmulatorTests",
            dependencies: ["Emulator", "AppSimulator", "CallRuntime", "CallEngine", "IPCWire", "MQTTTransport",
                           "IPCEmuTesting", "TestSupport", "CameraTestSupport", "CV4L2", "DeviceProfile"]
        ),
        .testTarget(name: "DeviceProfileTests", dependencies: ["DeviceProfile", "TestSupport"]),
        .testTarget(name: "MQTTTransportTests", dependencies: ["MQTTTransport", "TestSupport"]),
        .testTarget(
            name: "CameraTests",
            dependencies: ["Camera", "CV4L2", "CGStreamer", "TestSupport", "CameraTestSupport"]
        ),
        .testTarget(
            name: "CLITests",
            dependencies: ["AppSimulator", "CallEngine", "IPCWire", "MQTTTransport", "TestSupport"]
        ),
        .testTarget(
            name: "ControlAPITests",
            dependencies: [
                "ControlAPI", "Emulator", "AppSimulator", "CallEngine", "CallRuntime", "DeviceProfile", "IPCWire", "MQTTTransport",
                "TestSupport", "WebRTCLink", "CameraTestSupport", "CV4L2", .product(name: "Yams", package: "Yams"),
                // The HTTP server's own edges (MicroHTTPServerTests).
                "HTTPServe",
            ]
        ),
        .testTarget(
            name: "WebRTCLinkTests", dependencies: ["WebRTCLink", "Camera", "IPCWire", "TestSupport"],
            exclude: ["aiortc_offerer.py"]
        ),
        .testTarget(
            name: "IPCEmuTestingTests",
            // TestSupport only for the `.heavy` gate of parallel runs; the tests use IPCEmuTesting alone.
            dependencies: ["IPCEmuTesting", "TestSupport"]
        ),
        .testTarget(
            name: "ScenarioTests",
            dependencies: ["Scenario", "AppSimulator", "CallEngine", "CallRuntime", "IPCWire", "MQTTTransport", "TestSupport"]
        ),
        .testTarget(
            name: "FleetTests",
            dependencies: [
                "Emulator", "AppSimulator", "ControlAPI", "DeviceProfile", "IPCWire", "MQTTTransport", "CallEngine",
                "CallRuntime", "TestSupport",
            ]
        ),
        // The cloud join end to end: the `ipcemu` binary against scripts/tuya-cloud-standin.py.
        .testTarget(
            name: "CloudTests",
            dependencies: ["CloudLink", "TuyaCloud", "MQTTTransport", "IPCWire", "TestSupport"]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["Emulator", "AppSimulator", "DeviceProfile", "IPCWire", "TestSupport", "CameraTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
    ]
)

// MARK: libFuzzer targets (docs/robustness.md): only with IPCEMU_FUZZ=1, which scripts/fuzz.sh sets
// while it builds them into their own scratch path (.build-fuzz) with -sanitize=fuzzer. A normal
// `swift build` or `swift test` never sees them.
if ProcessInfo.processInfo.environment["IPCEMU_FUZZ"] == "1" {
    // The control API's generated code is committed (Sources/ControlAPISpec/Generated): the
    // control-body target builds it like any other source.
    package.targets += [
        .target(name: "CFuzzer", path: "Fuzz/Sources/CFuzzer"),
        .executableTarget(name: "FuzzWire", dependencies: ["CFuzzer", "IPCWire"], path: "Fuzz/Sources/FuzzWire"),
        .executableTarget(name: "FuzzSDP", dependencies: ["CFuzzer", "IPCWire", "WebRTCLink"], path: "Fuzz/Sources/FuzzSDP"),
        .executableTarget(name: "FuzzProfile", dependencies: ["CFuzzer", "DeviceProfile"], path: "Fuzz/Sources/FuzzProfile"),
        .executableTarget(name: "FuzzCallEngine", dependencies: ["CFuzzer", "CallEngine", "IPCWire"], path: "Fuzz/Sources/FuzzCallEngine"),
        .executableTarget(name: "FuzzCloud", dependencies: ["CFuzzer", "TuyaCloud", "IPCWire"], path: "Fuzz/Sources/FuzzCloud"),
        .executableTarget(name: "FuzzControlBody", dependencies: ["CFuzzer", "ControlAPI", "ControlAPISpec", "CallEngine", "IPCWire"],
                          path: "Fuzz/Sources/FuzzControlBody"),
    ]
}

// MARK: Sanitizer builds (docs/robustness.md): only with IPCEMU_SANITIZE=1, which scripts/sanitize.sh
// sets while it builds the suite with --sanitize=thread or address into its own scratch path. The
// package shrinks to the media and call stack (wire, engine, runtime, transport, camera, link, device,
// app and their tests): the control plane (ControlAPI and its generated spec, the metrics, the journal,
// scenarios, the `ipcemu` command) and its HTTP server (HTTPServe on libmicrohttpd) are left out,
// with the tests that need them. A normal
// `swift build` or `swift test` never sees this.
if ProcessInfo.processInfo.environment["IPCEMU_SANITIZE"] == "1" {
    let controlPlane: Set<String> = [
        "ControlAPI", "ControlAPISpec", "IPCMetrics", "ControlErrors", "CallJournal", "Scenario", "ipcemu",
        "HTTPServe", "CHTTPServe", "CMicroHTTPD",
        // Tests of the control plane, or of the `ipcemu` process (they run its binary).
        "ControlAPITests", "FleetTests", "ScenarioTests", "CLITests", "DeviceProfileTests",
        // The cloud join and its tests (they run the binary).
        "CloudLink", "CQREncode", "CloudTests",
    ]
    package.targets.removeAll { controlPlane.contains($0.name) }
    package.products.removeAll { product in product.name == "ControlAPI" || product.name == "ipcemu" }
}
