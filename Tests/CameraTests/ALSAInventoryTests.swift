import Camera
import Foundation
import Testing

@Suite("ALSA devices from /proc/asound (ipcemu cameras)")
struct ALSAInventoryTests {
    static let cards = """
         0 [PCH            ]: HDA-Intel - HDA Intel PCH
                              HDA Intel PCH at 0xf7f10000 irq 32
         1 [Device         ]: USB-Audio - USB PnP Sound Device
                              C-Media Electronics Inc. USB PnP Sound Device at usb-0000:00:14.0-1, full speed

        """
    static let pcm = """
        00-00: ALC892 Analog : ALC892 Analog : playback 1 : capture 1
        00-03: HDMI 0 : HDMI 0 : playback 1
        01-00: USB Audio : USB Audio : playback 1 : capture 1
        garbage line
        """

    @Test("cards and PCMs read into profile names with their directions")
    func parses() {
        let pcms = ALSAInventory.parse(cards: Self.cards, pcm: Self.pcm)
        #expect(pcms.count == 3)
        #expect(pcms.map(\.profileName) == ["plughw:CARD=PCH,DEV=0", "plughw:CARD=PCH,DEV=3", "plughw:CARD=Device,DEV=0"])
        #expect(pcms[1].playback && !pcms[1].capture)
        #expect(pcms[2].capture && pcms[2].playback && pcms[2].cardName == "USB PnP Sound Device")
        let text = ALSAInventory.render(pcms)
        #expect(text.contains("plughw:CARD=Device,DEV=0  USB PnP Sound Device: USB Audio  [capture, playback]"))
    }

    @Test("a machine without sound cards says so")
    func empty() {
        #expect(ALSAInventory.parse(cards: "--- no soundcards ---\n", pcm: "").isEmpty)
        #expect(ALSAInventory.render([]).contains("no sound cards"))
        let missing = ALSAInventory.scan(root: "/nonexistent-\(UUID().uuidString)")
        #expect(missing.isEmpty)
    }
}
