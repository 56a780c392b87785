import Emulator
import Foundation
import OpenAPIRuntime
import ControlAPISpec

/// PROTOCOL.md 8.5: a device's snapshots and left messages, served read-only from its
/// `DeviceMediaStore` (the paths its DPs 154, 115, 185 and 212 carry).
extension ControlHandlers {
    func listMedia(_ input: Operations.ListMedia.Input) async throws -> Operations.ListMedia.Output {
        let entry = try await entry(input.path.devId)
        let files = await entry.device.mediaStore.list()
        return .ok(.init(body: .json(S.MediaList(
            devId: entry.devId, files: files.map(Self.mediaFile), totalBytes: files.reduce(0) { $0 + $1.bytes }))))
    }

    func getMedia(_ input: Operations.GetMedia.Input) async throws -> Operations.GetMedia.Output {
        let entry = try await entry(input.path.devId)
        let name = input.path.name
        do {
            try DeviceMediaStore.validate(name: name)
        } catch {
            throw ControlError.badRequest(error.description, field: "name")
        }
        let store = entry.device.mediaStore
        guard let ref = await store.ref(name), let bytes = await store.read(name) else {
            throw ControlError(status: 404, "device '\(entry.devId)' has no media '\(name)'", field: "name")
        }
        let body = HTTPBody(bytes)
        switch ref.kind {
        case .image: return .ok(.init(body: .jpeg(body)))
        case .video: return .ok(.init(body: .videoMp4(body)))
        }
    }

    static func mediaFile(_ ref: MediaRef) -> S.MediaFile {
        S.MediaFile(
            name: ref.name, path: ref.path, kind: ref.kind == .image ? .image : .video,
            contentType: ref.kind == .image ? .imageJpeg : .videoMp4, bytes: ref.bytes, storedAt: Int(clamping: ref.storedAtMs),
            durationSeconds: ref.durationSeconds)
    }
}
