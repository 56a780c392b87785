import CQREncode

/// The pairing QR code (PROTOCOL.md 9.2) drawn in a terminal, as the SDK's demo draws it
/// (`examples/switch_demo/qrencode_print.c`: libqrencode, error correction level L, 8-bit mode
/// hint, case sensitive): here two characters per module so the modules come out square, light
/// modules as full blocks (dark terminals), and a quiet zone of `margin` light modules round it.
public enum TerminalQRCode {
    /// The rows of the drawing, or nil when libqrencode cannot encode `text`.
    public static func rows(for text: String, margin: Int = 2) -> [String]? {
        guard let code = text.withCString({ QRcode_encodeString($0, 0, QR_ECLEVEL_L, QR_MODE_8, 1) }) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        let light = "\u{2588}\u{2588}", dark = "  "
        let side = width + 2 * max(0, margin)
        let blank = String(repeating: light, count: side)
        var rows = Array(repeating: blank, count: max(0, margin))
        for y in 0..<width {
            var row = String(repeating: light, count: max(0, margin))
            for x in 0..<width {
                // Bit 0 of each byte: 1 = dark module (qrencode.h).
                row += data[y * width + x] & 1 == 1 ? dark : light
            }
            row += String(repeating: light, count: max(0, margin))
            rows.append(row)
        }
        rows += Array(repeating: blank, count: max(0, margin))
        return rows
    }

    /// The drawing with `url` as text beside it (below it when the terminal is narrow).
    public static func render(url: String, margin: Int = 2) -> String {
        guard let rows = rows(for: url, margin: margin) else { return "Pairing URL (no QR code could be made): \(url)\n" }
        let caption = ["Scan with the Tuya or Smart Life app", "(Add device > scan):", "", url]
        var out = ""
        for (index, row) in rows.enumerated() {
            let beside = index >= margin && index - margin < caption.count ? "   " + caption[index - margin] : ""
            out += row + beside + "\n"
        }
        return out
    }
}
