import ArgumentParser
import Camera

/// `ipcemu cameras`: the V4L2 cameras on this machine, with what each can deliver.
struct CamerasCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cameras",
        abstract: "List V4L2 cameras (/dev/video*) with card name, driver, formats, sizes and frame rates, and ALSA capture and playback devices."
    )

    @Flag(name: .long, help: "Also list V4L2 nodes that are not capture devices (metadata, codecs, outputs).")
    var all = false

    func run() throws {
        let devices = V4L2Inventory.scan()
        print(V4L2Inventory.render(devices, includeNonCapture: all), terminator: "")
        print("")
        print(ALSAInventory.render(ALSAInventory.scan()), terminator: "")
    }
}
