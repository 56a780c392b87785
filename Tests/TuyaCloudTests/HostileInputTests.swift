import IPCWire
import Testing
@testable import TuyaCloud

/// Nothing from outside may crash the process: mutated and random bytes through every decoder, and
/// random input sequences through the machine. Seeded, so a failure repeats.
@Suite("Hostile input")
struct HostileInputTests {
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static func mutate(_ bytes: [UInt8], using g: inout Generator) -> [UInt8] {
        var out = bytes
        switch g.next() % 4 {
        case 0 where !out.isEmpty:
            for _ in 0..<(1 + Int(g.next() % 4)) {
                let i = Int(g.next() % UInt64(out.count))
                out[i] ^= UInt8(truncatingIfNeeded: g.next() | 1)
            }
        case 1: out = Array(out.prefix(Int(g.next() % UInt64(out.count + 1))))
        case 2: out += (0..<Int(g.next() % 40)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        default: out = (0..<Int(g.next() % 300)).map { _ in UInt8(truncatingIfNeeded: g.next()) }
        }
        return out
    }

    @Test("mutated answers and tokens never crash a decoder")
    func decoders() throws {
        var g = Generator(state: 21)
        let seeds: [[UInt8]] = [
            FakeCloud.iotdnsBody(), try FakeCloud.activationBody(), try FakeCloud.okBody(status: "reset"),
            FakeCloud.refusal("TOKEN_EXPIRED"), try FakeCloud.tokenFrame(),
            Array(RPCAnswer.text(id: 1, success: true, resultJSON: "{}", t: 1).utf8),
            Array(#"[{"id":1,"mode":"rw","type":"obj","property":{"type":"bool"}}]"#.utf8),
        ]
        var refused = 0
        for round in 0..<3_000 {
            let input = Self.mutate(seeds[round % seeds.count], using: &g)
            if (try? IotDNSAnswer.parse(input)) == nil { refused += 1 }
            if let answer = try? ATOPAnswer.decode(input, key: FakeCloud.authkey, limit: 65_536) {
                _ = try? ActivationResult.decode(answer)
                _ = InfoSync.status(of: answer)
            }
            _ = try? ActivationToken.decode(input, authkey: FakeCloud.authkey)
            _ = try? RPCAnswer.decode(input)
            _ = try? DPDefinition.parseSchema(String(decoding: input, as: UTF8.self))
        }
        #expect(refused > 2_000)
    }

    @Test("random input sequences never crash the machine, and it is never stuck")
    func machine() throws {
        var g = Generator(state: 2026)
        for run in 0..<40 {
            var d = JoinDriver(try FakeCloud.config(skill: run % 2 == 0 ? #"{"webrtc":3}"# : nil))
            var armedRetry: Int64?
            var lastRequest: UInt64?
            d.feed(.start(run % 3 == 0 ? FakeCloud.activatedState() : nil))
            lastRequest = d.request?.id
            for _ in 0..<200 {
                let pendingId = d.request?.id ?? UInt64(g.next() % 20)
                let body: [UInt8]
                switch g.next() % 5 {
                case 0: body = FakeCloud.iotdnsBody()
                case 1: body = try FakeCloud.activationBody()
                case 2: body = try FakeCloud.okBody()
                case 3: body = FakeCloud.refusal(["SING_VALIDATE_FALED", "TOKEN_EXPIRED", "GATEWAY_NOT_EXISTS", "X"][Int(g.next() % 4)])
                default: body = Self.mutate(FakeCloud.iotdnsBody(), using: &g)
                }
                let input: CloudJoinInput
                switch g.next() % 12 {
                case 0, 1, 2: input = .httpsAnswered(id: pendingId, status: 200, body: body)
                case 3: input = .httpsFailed(id: pendingId, why: "reset")
                case 4: input = .mqttConnected
                case 5: input = .mqttConnackRefused(code: UInt8(g.next() % 7))
                case 6: input = .mqttConnectFailed(why: "tls")
                case 7: input = .mqttDisconnected(why: "gone")
                case 8: input = .tokenMessage(g.next() % 2 == 0 ? try FakeCloud.tokenFrame() : Self.mutate(try FakeCloud.tokenFrame(), using: &g))
                case 9: input = .rpcAnswer(Self.mutate(Array(RPCAnswer.text(id: 1, success: true, resultJSON: "null", t: 1).utf8), using: &g))
                case 10: input = .timerFired(CloudJoinTimer.allCases[Int(g.next() % 3)])
                default: input = g.next() % 10 == 0 ? .unpair : .start(nil)
                }
                d.now += Int64(g.next() % 10_000)
                d.feed(input)
                for effect in d.effects {
                    switch effect {
                    case .armTimer(.retry, let at): armedRetry = at
                    case .httpsRequest(let request): lastRequest = request.id
                    default: break
                    }
                }
                // Never stuck: a backoff has armed its timer, a phase that waits on a request asked for it.
                switch d.machine.phase {
                case .backoff(let at, _): #expect(armedRetry == at)
                case .resolvingEndpoints(_, let id), .activating(let id), .updatingVersions(let id), .uploadingSkill(let id), .unbound(let id):
                    #expect(lastRequest == id)
                default: break
                }
            }
        }
    }
}
