import Foundation

/// One call as an inline SVG sequence diagram: a lane per party (the device, then each app user),
/// an arrow per 308 event, notes for actions, faults, refusals and the end, times on the left.
enum SequenceDiagram {
    static func svg(_ call: CallSummary, id: String) -> String {
        let laneW = 190.0, left = 96.0, top = 50.0, rowH = 28.0
        let parties = call.parties
        var rows: [Row] = []
        var videoSeen: Set<String> = []
        // Heartbeats: the first exchange is drawn, the rest summed up in a note.
        var heartbeatsDrawn = 0
        var heartbeatsHidden = 0
        var lastHidden = call.start
        func flushHeartbeats() {
            guard heartbeatsHidden > 0 else { return }
            rows.append(Row(time: lastHidden, kind: .note(at: call.device, text: "\(heartbeatsHidden) more heartbeats", fill: "#f2f2f2")))
            heartbeatsHidden = 0
        }
        for o in call.observations {
            if case .message(let m, _) = o.kind, m.event == .heartbeat {
                if heartbeatsDrawn >= 2 {
                    heartbeatsHidden += 1
                    lastHidden = o.time
                    continue
                }
                heartbeatsDrawn += 1
            } else if case .video = o.kind {
            } else {
                flushHeartbeats()
            }
            switch o.kind {
            case .message(let m, let d):
                let from = d == .sent ? call.device : m.curId
                let to = d == .sent ? m.targetId : call.device
                var text = m.event.rawValue
                if let r = m.reason { text += " (\(r))" }
                rows.append(Row(time: o.time, kind: .arrow(from: from, to: to, text: text)))
            case .action(let a):
                rows.append(Row(time: o.time, kind: .note(at: call.device, text: a, fill: a.hasPrefix("fault") ? "#ffe3c2" : "#e4ecf7")))
            case .deviceEnded(let r):
                let text = "ended: \(r.outcome.rawValue)" + (r.reason.map { " (\($0.rawValue))" } ?? "")
                rows.append(Row(time: o.time, kind: .note(at: call.device, text: text, fill: "#dff0d8")))
            case .appEnded(let u, let r):
                let text = "ended: \(r.outcome.rawValue)" + (r.sdkError.map { " SDK \($0.rawValue)" } ?? "")
                rows.append(Row(time: o.time, kind: .note(at: u, text: text, fill: "#dff0d8")))
            case .offerRefused(_, let from, _):
                rows.append(Row(time: o.time, kind: .arrow(from: call.device, to: from, text: "302 disconnect (unauthorised)")))
            case .connection(let up, _):
                rows.append(Row(time: o.time, kind: .note(at: call.device, text: up ? "MQTT back" : "MQTT down", fill: "#f8d7da")))
            case .refused(let why):
                rows.append(Row(time: o.time, kind: .note(at: call.device, text: "refused: " + String(why.prefix(40)), fill: "#f8d7da")))
            case .video(_, let user, let frames, _):
                let key = user ?? "device"
                guard frames > 0, !videoSeen.contains(key) else { continue }
                videoSeen.insert(key)
                let text = user == nil ? "video: device sending" : "video: \(key) decoding"
                rows.append(Row(time: o.time, kind: .note(at: user ?? call.device, text: text, fill: "#e8f4fd")))
            case .doorbell(.message(let m, let d)):
                let peer = m.uid ?? "household"
                let text = m.event.rawValue + (m.reason.map { " (\($0))" } ?? "")
                rows.append(Row(time: o.time, kind: .arrow(from: d == .sent ? call.device : peer, to: d == .sent ? peer : call.device, text: text)))
            case .doorbell(let d):
                rows.append(Row(time: o.time, kind: .note(at: call.device, text: String(d.shortText.prefix(40)), fill: "#fff3cd")))
            }
        }
        flushHeartbeats()
        let width = left + laneW * Double(max(parties.count, 2)) + 20
        let height = top + 26 + rowH * Double(rows.count) + 20
        func laneX(_ p: String) -> Double {
            let i = parties.firstIndex(of: p) ?? 0
            return left + laneW * (Double(i) + 0.5)
        }
        var s = #"<svg id="\#(id)" class="sequence" xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-label="sequence diagram of session \#(htmlEscape(call.session))">"#
        s += #"<defs><marker id="\#(id)-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill='#333'/></marker></defs>"#
        s += #"<rect width="100%" height="100%" fill='#fff'/>"#
        for p in parties {
            let x = laneX(p)
            let boxFill = p == call.device ? "#34495e" : "#5d6d7e"
            s += #"<rect x="\#(f(x - 80))" y="10" width="160" height="26" rx="4" fill="\#(boxFill)"/>"#
            s += #"<text x="\#(f(x))" y="27" text-anchor="middle" font-size="12" fill='#fff'>\#(htmlEscape(String(p.prefix(24))))</text>"#
            s += #"<line x1="\#(f(x))" y1="36" x2="\#(f(x))" y2="\#(f(height - 10))" stroke='#999' stroke-dasharray="4 3"/>"#
        }
        for (i, row) in rows.enumerated() {
            let y = top + 26 + rowH * Double(i)
            let dt = row.time.timeIntervalSince(call.start)
            s += #"<text x="6" y="\#(f(y + 4))" font-size="11" fill='#555'>+\#(String(format: "%.3f", dt)) s</text>"#
            switch row.kind {
            case .arrow(let from, let to, let text):
                let x1 = laneX(from), x2 = laneX(to)
                if x1 == x2 {
                    s += #"<path d="M\#(f(x1)),\#(f(y - 6)) h30 v12 h-30" fill="none" stroke='#333' marker-end="url(#\#(id)-arrow)"/>"#
                    s += #"<text x="\#(f(x1 + 36))" y="\#(f(y + 4))" font-size="12">\#(htmlEscape(text))</text>"#
                } else {
                    s += #"<line class="msg" x1="\#(f(x1))" y1="\#(f(y))" x2="\#(f(x2))" y2="\#(f(y))" stroke='#333' stroke-width="1.3" marker-end="url(#\#(id)-arrow)"/>"#
                    s += #"<text x="\#(f((x1 + x2) / 2))" y="\#(f(y - 4))" text-anchor="middle" font-size="12">\#(htmlEscape(text))</text>"#
                }
            case .note(let at, let text, let fill):
                let x = laneX(at)
                let w = min(max(Double(text.count) * 6.4 + 14, 60), laneW * 1.6)
                s += #"<rect x="\#(f(x - w / 2))" y="\#(f(y - 11))" width="\#(f(w))" height="18" rx="3" fill="\#(fill)" stroke='#aaa'/>"#
                s += #"<text x="\#(f(x))" y="\#(f(y + 2))" text-anchor="middle" font-size="11">\#(htmlEscape(text))</text>"#
            }
        }
        return s + "</svg>"
    }

    struct Row {
        enum Kind {
            case arrow(from: String, to: String, text: String)
            case note(at: String, text: String, fill: String)
        }
        var time: Date
        var kind: Kind
    }

    static func f(_ v: Double) -> String { String(format: "%.1f", v) }
}
