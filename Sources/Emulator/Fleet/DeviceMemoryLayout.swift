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
            ("in the Device: EngineHost<DeviceSideEngine>", MemoryLayout<EngineHost<DeviceSideEngine>>.stride),
            ("in the Device: DataPointStore", MemoryLayout<DataPointStore>.stride),
            ("in the Device: PowerMachine", MemoryLayout<PowerMachine>.stride),
            ("in the Device: ScheduledTimers", MemoryLayout<ScheduledTimers>.stride),
            ("in the Device: PayloadOpener", MemoryLayout<PayloadOpener>.stride),
            ("in the Device: PayloadSealer (x2)", 2 * MemoryLayout<PayloadSealer>.stride),
            ("in the Device: DeviceFaults", MemoryLayout<DeviceFaults>.stride),
            ("in the Device: EventLog", MemoryLayout<EventLog>.stride),
            ("in the Device: DeviceCloudOptions?", MemoryLayout<DeviceCloudOptions?>.stride),
            ("in the Device: EventObservers<DeviceEvent>", MemoryLayout<EventObservers<DeviceEvent>>.stride),
            ("not in the Device: DeviceProfile (shared through DeviceTemplate)", MemoryLayout<DeviceProfile>.stride),
            ("in DeviceActivity (made on first use): CallRecord?", MemoryLayout<CallRecord?>.stride),
            ("in DeviceActivity: P2PLinkRules", MemoryLayout<P2PLinkRules>.stride),
            ("in the Device: DoorbellCounters", MemoryLayout<DoorbellCounters>.stride),
            ("in DeviceActivity: RefusalReplyLimiter", MemoryLayout<RefusalReplyLimiter>.stride),
            ("not in the MQTT client: MQTTClientOptions (shared per broker: ClientSettings)", MemoryLayout<MQTTClientOptions>.stride),
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
