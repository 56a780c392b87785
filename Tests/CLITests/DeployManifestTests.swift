import Foundation
import Testing
import TestSupport

/// deploy/kubernetes/ holds valid Kubernetes objects (strict schema validation by
/// kubernetes-validate from PyPI, through scripts/check-deploy.sh), and the check catches a broken
/// manifest (so a pass means something).
@Suite("deploy/kubernetes manifests", .timeLimit(.minutes(3)))
struct DeployManifestTests {
    /// Runs scripts/check-deploy.sh with the manifests of `folder` (default: the repo's).
    func check(folder: String? = nil) async throws -> (status: Int32, output: String) {
        var arguments = [packageRootPath + "/scripts/check-deploy.sh"]
        if let folder { arguments.append(folder) }
        let run = try await runProgram("/bin/bash", arguments, mergeOutput: true)
        return (run.status, run.stdout)
    }

    @Test("the shipped manifests validate and the Job's shard count matches its completions")
    func shippedManifestsValidate() async throws {
        let result = try await check()
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("manifests valid"), "\(result.output)")
    }

    @Test("a Job with an unknown field, or shards that disagree with completions, is refused")
    func brokenManifestsAreRefused() async throws {
        let source = packageRootPath + "/deploy/kubernetes"
        let job = try String(contentsOfFile: source + "/fleet-job.yaml", encoding: .utf8)
        let cases = [
            ("unknown field", job.replacingOccurrences(of: "  completionMode: Indexed", with: "  completionMode: Indexed\n  shardz: 10")),
            ("shard count", job.replacingOccurrences(of: "/10\"", with: "/12\"")),
        ]
        for (name, broken) in cases {
            #expect(broken != job, "the \(name) edit must change the manifest")
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ipcemu-deploy-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: dir) }
            for file in try FileManager.default.contentsOfDirectory(atPath: source) where file.hasSuffix(".yaml") {
                try FileManager.default.copyItem(atPath: source + "/" + file, toPath: dir.path + "/" + file)
            }
            try broken.write(toFile: dir.path + "/fleet-job.yaml", atomically: true, encoding: .utf8)
            let result = try await check(folder: dir.path)
            #expect(result.status != 0, "\(name): \(result.output)")
        }
    }
}
