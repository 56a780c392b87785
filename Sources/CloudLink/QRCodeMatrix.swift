import CQREncode

/// The modules of a QR code as libqrencode makes them (PROTOCOL.md 9.2's pairing code), with the
/// settings of the SDK's demo (`examples/switch_demo/qrencode_print.c`: error correction level L,
/// 8-bit mode hint, case sensitive). The terminal drawing and the console's SVG are both drawn
/// from this one matrix.
public struct QRCodeMatrix: Sendable, Equatable {
    /// Modules per side (21 + 4 per version).
    public let width: Int
    /// Row by row, `width * width` entries: true for a dark module.
    public let dark: [Bool]

    /// The code of `text`, or nil when libqrencode cannot encode it (too long, out of memory).
    public init?(text: String) {
        guard let code = text.withCString({ QRcode_encodeString($0, 0, QR_ECLEVEL_L, QR_MODE_8, 1) }) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, width <= 177, let data = code.pointee.data else { return nil }
        // Bit 0 of each byte: 1 = dark module (qrencode.h).
        dark = (0..<(width * width)).map { data[$0] & 1 == 1 }
        self.width = width
    }

    /// Whether the module at column `x`, row `y` is dark (false outside the symbol: the quiet zone).
    public func isDark(x: Int, y: Int) -> Bool {
        guard x >= 0, y >= 0, x < width, y < width else { return false }
        return dark[y * width + x]
    }
}

/// The pairing QR code as SVG text for the web console: one unit per module, a light quiet zone
/// of `margin` modules (4 is what the QR standard asks for), the dark modules as one path of
/// horizontal runs; `crispEdges` so a browser draws sharp squares at any size.
public enum QRCodeSVG {
    /// The SVG of `text`, or nil when no QR code can be made of it. `pixelsPerModule` sets the
    /// drawing's width and height attributes (the viewBox is in modules).
    public static func svg(for text: String, margin: Int = 4, pixelsPerModule: Int = 6) -> String? {
        guard let matrix = QRCodeMatrix(text: text) else { return nil }
        return svg(matrix, margin: margin, pixelsPerModule: pixelsPerModule)
    }

    public static func svg(_ matrix: QRCodeMatrix, margin: Int = 4, pixelsPerModule: Int = 6) -> String {
        let margin = max(0, min(margin, 16)), scale = max(1, min(pixelsPerModule, 64))
        let side = matrix.width + 2 * margin
        var path = ""
        for y in 0..<matrix.width {
            var x = 0
            while x < matrix.width {
                guard matrix.isDark(x: x, y: y) else { x += 1; continue }
                var run = 1
                while matrix.isDark(x: x + run, y: y) { run += 1 }
                path += "M\(x + margin) \(y + margin)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return #"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \#(side) \#(side)" width="\#(side * scale)" height="\#(side * scale)" shape-rendering="crispEdges">"#
            + #"<rect width="\#(side)" height="\#(side)" fill="white"/><path fill="black" d="\#(path)"/></svg>"#
    }
}
