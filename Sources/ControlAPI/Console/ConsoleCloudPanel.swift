/// The console's cloud panel (`ipcemu run --cloud tuya --control ...`, issue 21): while the device
/// pairs, the pairing QR code (`GET /api/cloud`'s `qrSVG`, drawn from the same libqrencode modules
/// as the terminal's) with the pairing URL as text beside it; always the join state and the last
/// error line. Hidden when the process is not on a cloud (404). Polled each second (the join's
/// steps are not call events), and the device list is refreshed when the state changes.
enum ConsoleCloudPanel {
    static let style = #"""
  #cloud .qr { display:flex; gap:16px; align-items:flex-start; margin-top:10px; }
  #cloud .qr img { width:240px; height:240px; image-rendering:pixelated; border:1px solid #e4e7ee; border-radius:6px; background:#fff; }
  #cloud .qr .url { font:12px ui-monospace, monospace; word-break:break-all; }
  .pill.pairing { background:#fff0d6; color:var(--warn); }
"""#

    static let script = #"""
// The cloud join (GET /api/cloud): the pairing QR code and URL while pairing, the state always.
const cloud = { state: null, missing: false };
async function refreshCloud() {
  if (cloud.missing) return;
  const box = document.getElementById("cloud");
  let c;
  try { c = await api("GET", "/api/cloud"); }
  catch (e) { if (/not on a cloud/.test(e.message)) { cloud.missing = true; box.hidden = true; } return; }
  box.hidden = false;
  const changed = cloud.state !== c.state;
  cloud.state = c.state;
  const cls = { joined: "ok", tokenPending: "pairing", unbound: "bad", backoff: "bad" }[c.state] || "";
  const rows = [el("dt", {}, "uuid"), el("dd", {}, c.uuid), el("dt", {}, "product"), el("dd", {}, c.productKey),
    el("dt", {}, "iotdns"), el("dd", {}, c.iotdns)];
  if (c.devId) rows.push(el("dt", {}, "devId"), el("dd", {}, c.devId));
  if (c.broker) rows.push(el("dt", {}, "broker"), el("dd", {}, c.broker));
  if (c.lastError) rows.push(el("dt", {}, "last error"), el("dd", { id: "cloud-error", class: "error" },
    c.lastError + (c.lastErrorAt ? " (" + new Date(c.lastErrorAt).toLocaleTimeString() + ")" : "")));
  const qr = c.pairingURL && c.qrSVG
    ? el("div", { class: "qr" },
        el("img", { id: "cloud-qr", alt: "pairing QR code", src: "data:image/svg+xml;charset=utf-8," + encodeURIComponent(c.qrSVG) }),
        el("div", {}, el("div", {}, "Scan with the Tuya or Smart Life app (Add device › scan):"),
          el("div", { class: "url", id: "cloud-url" }, c.pairingURL)))
    : "";
  box.replaceChildren(el("h2", {}, "Tuya cloud ", el("span", { class: "pill " + cls, id: "cloud-state", "data-state": c.state }, c.state)),
    el("div", { class: "sub", id: "cloud-detail" }, c.detail), qr, el("dl", {}, ...rows));
  if (changed) refresh();
}
refreshCloud();
setInterval(refreshCloud, 1000);
"""#
}
