/// The pairing QR code (PROTOCOL.md 9.2) drawn in a terminal, as the SDK's demo draws it
/// (`examples/switch_demo/qrencode_print.c`: libqrencode, error correction level L, 8-bit mode
/// hint, case sensitive): here two characters per module so the modules come out square, light
/// modules as full blocks (dark terminals), and a quiet zone of `margin` light modules round it.
public enum TerminalQRCode {
    /// The rows of the drawing, or nil when libqrencode cannot encode `text`.
    public static func rows(for text: String, margin: Int = 2) -> [String]? {
        guard let matrix = QRCodeMatrix(text: text) else { return nil }
        let light = "\u{2588}\u{2588}", dark = "  "
        let margin = max(0, margin)
        return (-margin..<(matrix.width + margin)).map { y in
            (-margin..<(matrix.width + margin)).map { x in matrix.isDark(x: x, y: y) ? dark : light }.joined()
        }
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
