import Foundation
import Testing
@testable import TuyaCloud

@Suite("Cloud state file")
struct CloudStateStoreTests {
    func directory() -> String {
        let dir = NSTemporaryDirectory() + "tuyacloud-\(UUID().uuidString)"
        return dir
    }

    @Test("saved and loaded back, mode 0600, no temporary file left")
    func roundTrip() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = CloudStateStore(directory: dir, uuid: FakeCloud.uuid)
        #expect(store.load() == .absent)
        let state = FakeCloud.activatedState()
        try store.save(state)
        #expect(store.load() == .loaded(state))
        let mode = try FileManager.default.attributesOfItem(atPath: store.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["tuya-cloud-\(FakeCloud.uuid).json"])
        var next = state
        next.activation = nil
        try store.save(next)
        #expect(store.load().state == next)
        try store.erase()
        #expect(store.load() == .absent)
        try store.erase()
    }

    @Test("a corrupt or foreign file is reported and treated as absent", arguments: [
        "{not json", #"{"format":1}"#, "[]", "",
    ])
    func corrupt(content: String) throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let store = CloudStateStore(directory: dir, uuid: FakeCloud.uuid)
        try Data(content.utf8).write(to: URL(fileURLWithPath: store.path))
        let result = store.load()
        guard case .corrupt(let why) = result else {
            Issue.record("expected corrupt, got \(result)")
            return
        }
        #expect(why.contains(store.path))
        #expect(result.state == nil)
        // Saving over it works.
        try store.save(FakeCloud.activatedState())
        #expect(store.load().state == FakeCloud.activatedState())
    }

    @Test("an oversized file is refused unread")
    func oversized() throws {
        let dir = directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let store = CloudStateStore(directory: dir, uuid: FakeCloud.uuid)
        try Data(repeating: 0x20, count: CloudStateStore.sizeLimit + 1).write(to: URL(fileURLWithPath: store.path))
        guard case .corrupt(let why) = store.load() else {
            Issue.record("expected corrupt")
            return
        }
        #expect(why.contains("more than a state file can"))
    }

    @Test("the file name never leaves the directory, whatever the uuid")
    func fileName() {
        let store = CloudStateStore(directory: "/tmp/x", uuid: "../../etc/passwd")
        #expect(store.path == "/tmp/x/tuya-cloud-______etc_passwd.json")
    }
}
