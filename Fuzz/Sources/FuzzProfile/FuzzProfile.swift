import DeviceProfile

// libFuzzer target: the profile loader (YAML text -> validated profile, or an error naming the
// file, line and field) and the broker URL of a fleet instance. Invariants: nothing traps; an error
// carries a message; a loaded profile's derived values (topics, meta) can be computed.

func fuzzProfile(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data else { return 0 }
    // libyaml's own limits aside, keep inputs to a profile's size.
    guard size <= 64 * 1024 else { return 0 }
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do {
        let profile = try DeviceProfile.parse(yaml: text, fileName: "fuzz.yaml")
        _ = profile.resolvedTopics
        _ = profile.meta.envelope(t: 0).encoded()
    } catch {
        precondition(!error.description.isEmpty, "an error without a message")
    }
    if text.count < 512 { _ = DeviceProfile.BrokerURL.parse(text) }
    return 0
}

/// libFuzzer's entry point (used when libFuzzer's own main runs the program).
@_cdecl("LLVMFuzzerTestOneInput")
public func llvmFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { fuzzProfile(data, size) }
