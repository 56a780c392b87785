import ControlAPI
import Emulator
import Foundation
import IPCWire
import Testing
import TestSupport

extension ControlAPI {
    /// PROTOCOL.md 8.5: `GET /api/devices/{devId}/media[/{name}]` serves the device's store read-only.
    @Suite("Media routes") struct MediaRoutes {
        static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0x42, count: 300) + [0xFF, 0xD9]
        static let mp4: [UInt8] = [0, 0, 0, 0x18] + Array("ftypisom".utf8) + [UInt8](repeating: 0, count: 12) + [UInt8](repeating: 0x11, count: 500)

        @Test("list and files: image/jpeg and video/mp4 byte for byte, the paths the DPs carry")
        func listAndServe() async throws {
            try await withControl { f in
                let store = f.device.mediaStore
                await store.removeAll()
                let empty = try await f.request("GET", f.base + "/media")
                #expect(empty.status == 200)
                #expect(empty.json?["devId"]?.string == f.devId)
                #expect(empty.json?["files"]?.array?.isEmpty == true)
                #expect(empty.json?["totalBytes"]?.int == 0)

                let press = try await store.store(Self.jpeg, name: "press-617bdf7a1732200000.jpg")
                let message = try await store.store(Self.mp4, name: "message-617bdf7a1732200000.mp4", durationSeconds: 10)
                #expect(press.path == f.base + "/media/press-617bdf7a1732200000.jpg")

                let list = try await f.request("GET", f.base + "/media")
                #expect(list.status == 200)
                let files = list.json?["files"]?.array ?? []
                #expect(files.map { $0["name"]?.string } == [press.name, message.name])
                #expect(files.first?["kind"]?.string == "image" && files.first?["contentType"]?.string == "image/jpeg")
                #expect(files.first?["path"]?.string == press.path)
                #expect(files.first?["bytes"]?.int == Int64(Self.jpeg.count))
                #expect(files.first?["durationSeconds"] == nil)
                #expect(files.last?["kind"]?.string == "video" && files.last?["durationSeconds"]?.int == 10)
                #expect(list.json?["totalBytes"]?.int == Int64(Self.jpeg.count + Self.mp4.count))

                // The path in the DP is the URL to fetch.
                let image = try await f.request("GET", press.path)
                #expect(image.status == 200)
                #expect(image.headers["content-type"] == "image/jpeg")
                #expect(image.body == Self.jpeg)
                let video = try await f.request("GET", message.path)
                #expect(video.status == 200)
                #expect(video.headers["content-type"] == "video/mp4")
                #expect(video.body == Self.mp4)
                await store.removeAll()
            }
        }

        @Test("unknown file or device: 404 naming the field; bad names: 400 naming `name`; read-only: 405")
        func refusals() async throws {
            try await withControl { f in
                let store = f.device.mediaStore
                await store.removeAll()
                try await store.store(Self.jpeg, name: "press-aaaaaaaa1732200000.jpg")
                let missing = try await f.request("GET", f.base + "/media/press-nope.jpg")
                #expect(missing.status == 404)
                #expect(missing.json?["field"]?.string == "name")
                #expect(missing.json?["error"]?.string?.contains("press-nope.jpg") == true)
                let noDevice = try await f.request("GET", "/api/devices/nope/media/press-aaaaaaaa1732200000.jpg")
                #expect(noDevice.status == 404)
                #expect(noDevice.json?["field"]?.string == "devId")
                let noDeviceList = try await f.request("GET", "/api/devices/nope/media")
                #expect(noDeviceList.status == 404)
                for bad in [".hidden.jpg", "x.txt", "a%20b.jpg", "..jpg", "%2E%2E.jpg"] {
                    let r = try await f.request("GET", f.base + "/media/" + bad)
                    #expect(r.status == 400, "\(bad): \(r.status) \(r.text)")
                    #expect(r.json?["field"]?.string == "name", "\(bad)")
                }
                // A slash, encoded or not, never reaches a file outside the store.
                for escape in ["..%2F..%2Fetc%2Fpasswd", "%2E%2E%2Fpress-aaaaaaaa1732200000.jpg"] {
                    let r = try await f.request("GET", f.base + "/media/" + escape)
                    #expect(r.status == 400 || r.status == 404, "\(escape): \(r.status)")
                    #expect(r.body != Self.jpeg)
                }
                let post = try await f.request("POST", f.base + "/media/press-aaaaaaaa1732200000.jpg")
                #expect(post.status == 405)
                let delete = try await f.request("DELETE", f.base + "/media/press-aaaaaaaa1732200000.jpg")
                #expect(delete.status == 405)
                #expect(await store.read("press-aaaaaaaa1732200000.jpg") == Self.jpeg)
                await store.removeAll()
            }
        }
    }
}
