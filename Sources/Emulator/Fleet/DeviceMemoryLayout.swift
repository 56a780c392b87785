import CallEngine
import CallRuntime
import DeviceProfile
import Foundation
import IPCWire
import MQTTTransport

/// What one `Device` holds inline, part by part (`ipcemu bench fleet --breakdown`; docs/fleet.md
/// "Memory per device"): the stride of each stored part's type, and the size of the actor's own
/// allocation as the heap gives it. Heap storage the parts point to (strings, arrays, objects) is
/// not in these figures; the breakdown's rows measure it.
package enum DeviceMemoryLayout {
    /// The inline bytes of the Device's bigger parts, biggest first.
    package static func parts() -> [(part: String, bytes: Int)] {
        let parts: [(String, Int)] = [
            ("EngineHost<DeviceSideEngine>", MemoryLayout<EngineHost<DeviceSideEngine>>.stride),
            ("DataPointStore", MemoryLayout<DataPointStore>.stride),
            ("PowerMachine", MemoryLayout<PowerMachine>.stride),
            ("ScheduledTimers", MemoryLayout<ScheduledTimers>.stride),
            ("PayloadOpener", MemoryLayout<PayloadOpener>.stride),
            ("PayloadSealer (x2)", 2 * MemoryLayout<PayloadSealer>.stride),
            ("DeviceFaults", MemoryLayout<DeviceFaults>.stride),
            ("EventLog", MemoryLayout<EventLog>.stride),
            ("DeviceCloudOptions?", MemoryLayout<DeviceCloudOptions?>.stride),
            ("EventObservers<DeviceEvent>", MemoryLayout<EventObservers<DeviceEvent>>.stride),
            ("(not inline: DeviceProfile, shared by reference through DeviceTemplate)", MemoryLayout<DeviceProfile>.stride),
            ("(not inline: DeviceActivity's parts, made on first use) CallRecord?", MemoryLayout<CallRecord?>.stride),
            ("(not inline) P2PLinkRules", MemoryLayout<P2PLinkRules>.stride),
            ("(not inline) DoorbellCounters", MemoryLayout<DoorbellCounters>.stride),
            ("(not inline) RefusalReplyLimiter", MemoryLayout<RefusalReplyLimiter>.stride),
            ("MQTTClientOptions (in the client, not the Device)", MemoryLayout<MQTTClientOptions>.stride),
        ]
        return parts.sorted { $0.1 > $1.1 }
    }

    /// The bytes of `object`'s own heap allocation (glibc's `malloc_usable_size`; 0 without it).
    package static func allocationSize(of object: AnyObject) -> Int {
        guard let usableSize else { return 0 }
        return usableSize(Unmanaged.passUnretained(object).toOpaque())
    }

    /// glibc's `malloc_usable_size` (malloc.h, not in Swift's Glibc module), looked up once.
    private static let usableSize: (@convention(c) (UnsafeMutableRawPointer?) -> Int)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutableRawPointer?) -> Int).self)
    }()
}
