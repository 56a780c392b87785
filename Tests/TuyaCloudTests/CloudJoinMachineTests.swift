import IPCWire
import Testing
@testable import TuyaCloud

@Suite("Cloud join machine: the paths that work")
struct CloudJoinPathTests {
    @Test("pairing from nothing to the device link, the upgrade check answered none")
    func pairing() throws {
        var d = JoinDriver(try FakeCloud.config(skill: #"{"webrtc":3}"#))
        d.feed(.start(nil))
        #expect(d.effects.first == .showPairing(url: "https://smartapp.tuya.com/s/p?p=abcdefgh12345678&uuid=tuya0123456789abcdef&v=2.0"))
        var request = try #require(d.request)
        #expect(request.url == "https://127.0.0.9:8443/v2/url_config")
        #expect(request.caDER == [9, 9])
        #expect(String(decoding: request.body, as: UTF8.self).hasSuffix(#"}],"env":"pro"}"#))
        #expect(d.machine.phase == .resolvingEndpoints(.pairing, request: request.id))

        d.answer(FakeCloud.iotdnsBody())
        let direct = try #require(d.connect)
        #expect(direct.link == .direct)
        #expect(direct.host == "127.0.0.11")
        #expect(direct.port == 8883)
        #expect(direct.caDER == FakeCloud.caDER)
        #expect(direct.clientId == "acon_" + FakeCloud.uuid)
        #expect(direct.subscriptions == ["d/ai/" + FakeCloud.uuid])
        #expect(direct.keepAliveSeconds == 120)
        #expect(direct.cleanSession)

        d.feed(.mqttConnected)
        #expect(d.machine.phase == .directLink(.waitingForToken))
        #expect(d.logs.contains { $0.contains("waiting for the app to scan the QR code") })

        d.feed(.tokenMessage(try FakeCloud.tokenFrame()))
        #expect(Array(d.effects.prefix(2)) == [.mqttDisconnect, .hidePairing])
        #expect(d.stored?.region == "EU")
        #expect(d.stored?.env == "pro")
        request = try #require(d.request)
        #expect(String(decoding: request.body, as: UTF8.self).hasSuffix(#"}],"region":"EU","env":"pro"}"#))

        d.answer(FakeCloud.iotdnsBody())
        request = try #require(d.request)
        #expect(request.purpose == .activate)
        #expect(request.host == "127.0.0.10")
        #expect(request.port == 443)
        #expect(request.caDER == FakeCloud.caDER)
        #expect(request.pathAndQuery.hasPrefix("/d.json?a=tuya.device.active&et=1&t=1732200000&uuid=\(FakeCloud.uuid)&v=4.4&sign="))
        #expect(request.headers == ATOPRequest.headers)

        d.answer(try FakeCloud.activationBody())
        #expect(d.stored?.activation?.devId == FakeCloud.devId)
        #expect(d.logs.contains { $0.contains("activated as devId \(FakeCloud.devId)") })
        request = try #require(d.request)
        #expect(request.purpose == .updateVersions)
        #expect(request.pathAndQuery.hasPrefix("/d.json?a=tuya.device.versions.update&devId=\(FakeCloud.devId)&et=1&"))

        d.answer(try FakeCloud.okBody())
        #expect(d.stored?.syncedVersions == VersionsUpdate.versionsText(softwareVersion: "1.0.0"))
        request = try #require(d.request)
        #expect(request.purpose == .updateSkill)

        d.answer(try FakeCloud.okBody())
        #expect(d.stored?.syncedSkill == #"{"webrtc":3}"#)
        let device = try #require(d.connect)
        #expect(device.link == .device)
        #expect(device.clientId == FakeCloud.devId)
        #expect(device.password == MQTTCredentials.password(forKey: FakeCloud.secKey))
        #expect(device.subscriptions.first == "smart/device/in/" + FakeCloud.devId)

        d.feed(.mqttConnected)
        let joined = d.effects.compactMap { effect -> CloudDeviceIdentity? in
            if case .joined(let identity) = effect { return identity }
            return nil
        }
        #expect(joined.count == 1)
        #expect(joined.first?.localKey == FakeCloud.localKey)
        #expect(joined.first?.dataPoints.map(\.code) == ["switch"])
        #expect(d.effects.contains(.armTimer(.upgradeCheck, at: d.now + 1_000)))

        d.now += 1_000
        d.feed(.timerFired(.upgradeCheck))
        let check = RPCRequest.upgradeCheck(id: 1, t: d.now / 1_000)
        #expect(d.effects.first == .mqttPublish(topic: "rpc/req/" + FakeCloud.devId, payload: check.payload, qos: 0))
        #expect(d.effects.contains(.armTimer(.rpcTimeout, at: d.now + 8_000)))
        #expect(d.effects.contains(.armTimer(.upgradeCheck, at: d.now + 86_400_000)))

        d.feed(.rpcAnswer(Array(RPCAnswer.text(id: 1, success: true, resultJSON: #""none""#, t: 1).utf8)))
        #expect(d.effects.first == .cancelTimer(.rpcTimeout))
        #expect(d.logs == ["upgrade check: no firmware offered"])
        #expect(d.machine.phase == .deviceLink(.connected))
    }

    @Test("resuming a stored activation: the stored region, no versions update when unchanged")
    func resume() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        #expect(!d.effects.contains { if case .showPairing = $0 { true } else { false } })
        let request = try #require(d.request)
        #expect(String(decoding: request.body, as: UTF8.self).hasSuffix(#""region":"EU","env":"pro"}"#))
        d.answer(FakeCloud.iotdnsBody())
        #expect(d.connect?.link == .device)
        #expect(d.stored == nil)
    }

    @Test("resuming when iotdns fails: the endpoints it gave before")
    func resumeWithoutIotDNS() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState(versions: false)))
        d.fail("connection refused")
        #expect(d.logs.first?.contains("going on with the endpoints it gave before") == true)
        #expect(d.request?.purpose == .updateVersions)
        // A failed versions update is not fatal, as in the SDK.
        d.answer(FakeCloud.refusal("SOMETHING"))
        #expect(d.logs.first?.hasPrefix("versions update was refused (SOMETHING: msg)") == true)
        #expect(d.connect?.link == .device)
    }

    @Test("a state for another uuid is ignored: the device pairs")
    func otherUUID() throws {
        var d = JoinDriver(try FakeCloud.config())
        var state = FakeCloud.activatedState()
        state.uuid = "someoneelse"
        d.feed(.start(state))
        #expect(d.effects.contains { if case .showPairing = $0 { true } else { false } })
        #expect(d.logs.first?.contains("is for uuid someoneelse") == true)
    }

    @Test("a lost device link: left, and connected again at once")
    func lostLink() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnected)
        d.feed(.mqttDisconnected(why: "keepalive timeout"))
        #expect(d.effects.first == .left(why: "the link went down: keepalive timeout"))
        #expect(d.connect?.link == .device)
        #expect(d.machine.phase == .deviceLink(.connecting))
    }

    @Test("unpair while connected: tuya.device.reset, link closed, timers cancelled, state erased")
    func unpair() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnected)
        d.feed(.unpair)
        #expect(d.effects.first == .mqttPublish(topic: "rpc/req/" + FakeCloud.devId,
                                                payload: RPCRequest.reset(id: 1, t: d.now / 1_000).payload, qos: 0))
        #expect(d.effects.contains(.left(why: "unpaired")))
        #expect(d.effects.contains(.mqttDisconnect))
        #expect(d.effects.contains(.eraseState))
        for timer in CloudJoinTimer.allCases { #expect(d.effects.contains(.cancelTimer(timer))) }
        #expect(d.machine.phase == .idle)
        // A late answer changes nothing; a new start pairs.
        d.feed(.httpsAnswered(id: 1, status: 200, body: []))
        #expect(d.machine.phase == .idle)
        d.feed(.start(nil))
        #expect(d.effects.contains { if case .showPairing = $0 { true } else { false } })
    }
}

@Suite("Cloud join machine: each refusal of issue 21")
struct CloudJoinRefusalTests {
    @Test("activation refused for a bad sign: the authkey does not match; retried with backoff", arguments: [
        ("SING_VALIDATE_FALED", "the authkey does not match this uuid"),
        ("PRODUCT_NOT_EXIST", "the cloud does not know this product id: check productKey"),
    ])
    func refusedActivation(code: String, advice: String) throws {
        var d = JoinDriver(try FakeCloud.config())
        try d.pairUntilActivation()
        d.answer(FakeCloud.refusal(code))
        let line = try #require(d.logs.first)
        #expect(line.hasPrefix("activation refused (\(code): msg): \(advice)"))
        #expect(line.hasSuffix("retrying in 1 s"))
        #expect(d.retryAt == d.now + 1_000)
        d.now += 1_000
        d.feed(.timerFired(.retry))
        #expect(d.request?.purpose == .activate)
        d.answer(FakeCloud.refusal(code))
        #expect(d.logs.first?.hasSuffix("retrying in 2 s") == true)
        #expect(d.retryAt == d.now + 2_000)
    }

    @Test("activation refused for an expired token: scan again, pairing again")
    func expiredToken() throws {
        var d = JoinDriver(try FakeCloud.config())
        try d.pairUntilActivation()
        d.answer(FakeCloud.refusal("TOKEN_EXPIRED"))
        #expect(d.logs.first == "activation refused (TOKEN_EXPIRED: msg): the pairing token is expired or already used: scan the QR code again with the app; pairing again")
        #expect(d.effects.contains { if case .showPairing = $0 { true } else { false } })
        #expect(d.machine.phase == .resolvingEndpoints(.pairing, request: d.request?.id ?? 0))
    }

    @Test("a TLS failure of the API: named, with the certificate to check, and retried")
    func tlsFailure() throws {
        var d = JoinDriver(try FakeCloud.config())
        try d.pairUntilActivation()
        d.fail("TLS handshake failed: certificate verify failed")
        #expect(d.logs == ["activation failed: the request to the API failed: TLS handshake failed: certificate verify failed. Check the network, and that the API's certificate verifies against the CA iotdns gave; retrying in 1 s"])
        #expect(d.machine.phase == .backoff(retryAt: d.now + 1_000, step: .activate))
    }

    @Test("a garbage or oversized activation answer, or one under another key")
    func unusableActivationAnswer() throws {
        var d = JoinDriver(try FakeCloud.config())
        try d.pairUntilActivation()
        d.answer(Array("<html>502</html>".utf8), status: 502)
        #expect(d.logs.first?.hasPrefix("activation failed: the answer (HTTP 502) is unusable: answer is not the JSON expected") == true)
        d.now += 1_000
        d.feed(.timerFired(.retry))
        d.answer([UInt8](repeating: 0x20, count: ATOPRequest.activationAnswerLimit + 1))
        #expect(d.logs.first?.contains("exceeds the 65536-byte limit") == true)
        d.now += 2_000
        d.feed(.timerFired(.retry))
        d.answer(try ATOPAnswer.sealed(plainAnswer: #"{"success":true,"result":{}}"#, key: "ZZZZZZZZZZZZZZZZ", t: 1))
        #expect(d.logs.first?.contains("sealed with another key") == true)
    }

    @Test("CONNACK 5 on the device link: info.sync, the activation erased (devId kept), pairing again")
    func connack5() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnackRefused(code: 5))
        #expect(d.logs == ["the broker refused the device (CONNACK 5, not authorized): it was removed from its home in the app; erasing the activation and pairing again"])
        let sync = try #require(d.request)
        #expect(sync.purpose == .syncInfo)
        #expect(sync.pathAndQuery.hasPrefix("/d.json?a=tuya.device.info.sync&devId=\(FakeCloud.devId)&et=1&"))
        d.answer(try FakeCloud.okBody(status: "reset"))
        #expect(d.logs.first == "tuya.device.info.sync: reset")
        #expect(d.effects.contains(.eraseState))
        let kept = try #require(d.stored)
        #expect(kept.activation == nil)
        #expect(kept.region == nil)
        #expect(kept.previousDevId == FakeCloud.devId)
        #expect(d.effects.contains { if case .showPairing = $0 { true } else { false } })
        // The next activation names the old devId, as the SDK's does.
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnected)
        d.feed(.tokenMessage(try FakeCloud.tokenFrame()))
        d.answer(FakeCloud.iotdnsBody())
        let activation = try #require(d.request)
        #expect(activation.purpose == .activate)
        let json = ActivationRequest(licence: try FakeCloud.licence(), token: "EUtok123", softwareVersion: "1.0.0", t: d.now / 1_000,
                                     previousDevId: FakeCloud.devId).request
        #expect(activation.body == (try json.body()))
    }

    @Test("other CONNACK refusals of the device link back off 0-1 s, then up to 2, 4, 8 s")
    func connackOther() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        var ceilings: [Int64] = []
        for ceiling: Int64 in [1_000, 2_000, 4_000, 8_000, 8_000] {
            d.feed(.mqttConnackRefused(code: 3))
            #expect(d.logs.first?.hasPrefix("device link: the broker refused the connection (CONNACK 3, server unavailable); retrying in") == true)
            let at = try #require(d.retryAt)
            #expect(at - d.now <= ceiling)
            ceilings.append(at - d.now)
            d.now = at
            d.feed(.timerFired(.retry))
            #expect(d.connect?.link == .device)
        }
        // Connected: the backoff starts over.
        d.feed(.mqttConnected)
        #expect(d.machine.mqttJitterMax == 1_000)
    }

    @Test("a TLS failure of the device link is named, with the CA to check")
    func deviceTLS() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnectFailed(why: "TLS: unknown CA"))
        #expect(d.logs.first?.hasPrefix("device link: the connection failed: TLS: unknown CA (check the network, and that the broker's certificate verifies against the CA iotdns gave); retrying in") == true)
    }

    @Test("CONNACK 4 on the direct link: the uuid and authkey are not a pair; retried after 2 s and the backoff")
    func directRefused() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(nil))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnackRefused(code: 4))
        let line = try #require(d.logs.first)
        #expect(line.hasPrefix("direct link: the broker refused the connection (CONNACK 4, bad user name or password) (the broker does not accept this uuid and authkey: use the pair issued together"))
        let at = try #require(d.retryAt)
        #expect(at - d.now >= 2_000 && at - d.now <= 3_000)
        d.now = at
        d.feed(.timerFired(.retry))
        #expect(d.connect?.link == .direct)
    }

    @Test("an iotdns answer missing fields, garbage, oversized: named and retried", arguments: [
        (FakeCloud.iotdnsBody(missing: "caArr"), "answer lacks the field 'caArr'"),
        (FakeCloud.iotdnsBody(missing: "mqttsSelfUrl"), "answer lacks the field 'mqttsSelfUrl'"),
        (Array("garbage".utf8), "answer is not the JSON expected"),
        ([UInt8](repeating: 0x20, count: 7_000), "answer of 7000 bytes exceeds the 6144-byte limit"),
    ])
    func iotdnsRefusals(body: [UInt8], expected: String) throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(nil))
        d.answer(body)
        let line = try #require(d.logs.first)
        #expect(line.hasPrefix("iotdns failed: the answer (HTTP 200) is unusable: "))
        #expect(line.contains(expected))
        #expect(line.hasSuffix("retrying in 1 s"))
        d.now += 1_000
        d.feed(.timerFired(.retry))
        #expect(d.request?.purpose == .resolveEndpoints)
        d.answer(FakeCloud.iotdnsBody())
        #expect(d.connect?.link == .direct)
    }

    @Test("a token in the wrong encryption: named, and the device keeps waiting")
    func wrongToken() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.pairUntilToken()
        d.feed(.tokenMessage(try FakeCloud.tokenFrame(authkey: "ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ")))
        #expect(d.logs == ["a pairing token arrived in the wrong encryption (it does not open with this authkey): the cloud sealed it for another authkey; check that the authkey belongs to uuid \(FakeCloud.uuid). Still waiting"])
        #expect(d.machine.phase == .directLink(.waitingForToken))
        d.feed(.tokenMessage(Array("not a frame".utf8)))
        #expect(d.machine.phase == .directLink(.waitingForToken))
        d.feed(.tokenMessage(try FakeCloud.tokenFrame()))
        #expect(d.effects.first == .mqttDisconnect)
    }

    @Test("answers nobody waits for, and timers that are not due, change nothing")
    func strays() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(nil))
        let phase = d.machine.phase
        d.feed(.httpsAnswered(id: 999, status: 200, body: FakeCloud.iotdnsBody()))
        d.feed(.httpsFailed(id: 999, why: "x"))
        d.feed(.timerFired(.retry))
        d.feed(.timerFired(.rpcTimeout))
        d.feed(.mqttConnected)
        d.feed(.rpcAnswer(Array("{}".utf8)))
        d.feed(.tokenMessage(try FakeCloud.tokenFrame()))
        d.feed(.start(nil))
        #expect(d.machine.phase == phase)
    }

    @Test("the upgrade check unanswered in 8 s is logged")
    func rpcTimeout() throws {
        var d = JoinDriver(try FakeCloud.config())
        d.feed(.start(FakeCloud.activatedState()))
        d.answer(FakeCloud.iotdnsBody())
        d.feed(.mqttConnected)
        d.feed(.timerFired(.upgradeCheck))
        d.feed(.timerFired(.rpcTimeout))
        #expect(d.logs == ["the upgrade check (rpc id 1) had no answer in 8 s; the next is in 24 h"])
    }
}
