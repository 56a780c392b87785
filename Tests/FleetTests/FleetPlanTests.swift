import DeviceProfile
import Emulator
import Testing
import TestSupport

@Suite("Fleet plan: shards, counts, templates, credentials")
struct FleetPlanTests {
    @Test("--shard i/N blocks are disjoint, in order, and cover every position exactly once", arguments: [0, 1, 7, 100, 10_001, 99_999])
    func shardsDisjointAndComplete(total: Int) throws {
        for n in [1, 2, 3, 7, 10, 64] {
            var next = 0
            var sizes: [Int] = []
            for i in 0..<n {
                let block = try FleetShard(index: i, count: n).block(of: total)
                #expect(block.lowerBound == next, "shard \(i)/\(n) of \(total) starts at \(block.lowerBound), expected \(next)")
                next = block.upperBound
                sizes.append(block.count)
            }
            #expect(next == total)
            #expect((sizes.max() ?? 0) - (sizes.min() ?? 0) <= 1, "block sizes \(sizes)")
        }
    }

    @Test("A shard of a huge plan does not overflow")
    func hugeBlocks() throws {
        let block = FleetShard.block(3, of: 7, in: 0..<(Int.max / 2))
        #expect(block.count > 0)
        #expect(block.lowerBound > 0)
    }

    @Test("--shard parses i/N and refuses anything else with a message")
    func shardParsing() throws {
        #expect(try FleetShard.parse("2/5") == FleetShard(index: 2, count: 5))
        for bad in ["5/5", "-1/3", "1/0", "x/2", "1", "1/2/3", ""] {
            #expect(throws: FleetError.self) { try FleetShard.parse(bad) }
        }
    }

    @Test("Counts: explicit ones kept, the rest of --count shared out, mismatches refused")
    func counts() throws {
        #expect(try FleetPlan.counts(explicit: [8000, 2000], total: nil) == [8000, 2000])
        #expect(try FleetPlan.counts(explicit: [8000, nil], total: 10_000) == [8000, 2000])
        #expect(try FleetPlan.counts(explicit: [nil, nil, nil], total: 10) == [4, 3, 3])
        #expect(try FleetPlan.counts(explicit: [nil], total: nil) == [1])
        #expect(throws: FleetError.self) { try FleetPlan.counts(explicit: [5, 5], total: 11) }
        #expect(throws: FleetError.self) { try FleetPlan.counts(explicit: [20, nil], total: 10) }
        #expect(throws: FleetError.self) { try FleetPlan.counts(explicit: [nil, nil], total: nil) }
    }

    @Test("Mixed templates: positions map to the right template with index start+position; ids are distinct")
    func mixedTemplates() throws {
        var door = try DeviceProfile.load(path: packageRootPath + "/device-profiles/doorbell.yaml")
        door.identity.devId = "door-{index:5}"
        var panel = try DeviceProfile.load(path: packageRootPath + "/device-profiles/control-panel.yaml")
        panel.identity.devId = "panel-{index}"
        let plan = try FleetPlan(groups: [.init(profile: door, count: 3), .init(profile: panel, count: 2)], start: 10)
        #expect(try plan.devIds(0..<5) == ["door-00010", "door-00011", "door-00012", "panel-13", "panel-14"])
        #expect(try plan.profile(at: 4).identity.category == panel.identity.category)
        #expect(throws: FleetError.self) { try plan.profile(at: 5) }
        #expect(throws: FleetError.self) { try FleetPlan(groups: [.init(profile: door, count: 1)], start: -1) }
    }

    @Test("Per-device credentials: {devId} and {index} in username, password and certificate paths")
    func credentials() throws {
        var p = try DeviceProfile.load(path: packageRootPath + "/device-profiles/doorbell.yaml")
        p.identity.devId = "cam-{index:3}"
        p.broker.username = "user-{index}"
        p.broker.password = "pw-{devId}"
        p.broker.certFile = "/certs/{devId}.crt"
        p.broker.keyFile = "/certs/{index:4}.key"
        let d = try p.instance(index: 7)
        #expect(d.identity.devId == "cam-007")
        #expect(d.brokerUsername == "user-7")
        #expect(d.broker.password == "pw-cam-007")
        #expect(d.broker.certFile == "/certs/cam-007.crt")
        #expect(d.broker.keyFile == "/certs/0007.key")
    }
}
