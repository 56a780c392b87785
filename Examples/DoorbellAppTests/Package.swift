// swift-tools-version:6.0
// An app team's test package that uses ipcemu's virtual doorbells (issue 12). It depends on the
// ipcemu checkout two folders up; a real project names the repository by URL and version:
//     .package(url: "https://github.com/OWNER/ipcemu", from: "0.1.0")
// scripts/check-consumer.sh builds and tests this package exactly that way (a file:// URL and a tag).
import PackageDescription

let package = Package(
    name: "DoorbellAppTests",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "ipcemu", path: "../.."),
    ],
    targets: [
        .testTarget(
            name: "DoorbellAppTests",
            dependencies: [.product(name: "IPCEmuTesting", package: "ipcemu")]
        ),
    ]
)
