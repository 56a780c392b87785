/// The web console served at `/`: one self-contained page (no CDN, no build step). Devices with
/// live state (server-sent events), their buttons, and a phone panel that plays an app user.
///
/// Live video: once the phone panel's call is answered, `startVideo(session)` makes a receive-only
/// `RTCPeerConnection` offer, posts it to `/api/phone/video` (relayed to the device as the console
/// user over MQTT) and plays the device's stream in `<video id="phone-video">`.
enum ConsolePage {
    static let html = #"""
<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ipcemu console</title>
<style>
  :root { --bg:#f4f5f7; --card:#fff; --ink:#1d2330; --muted:#667; --ok:#1a7f37; --warn:#b35900; --bad:#c62828; --accent:#2457c5; }
  * { box-sizing: border-box; }
  body { margin:0; font:14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--ink); }
  header { padding:12px 20px; background:#1d2330; color:#fff; display:flex; gap:16px; align-items:baseline; }
  header h1 { margin:0; font-size:18px; }
  header .live { font-size:12px; color:#9fb3d9; }
  main { display:grid; grid-template-columns: 1fr 320px; gap:16px; padding:16px 20px; }
  .card { background:var(--card); border-radius:10px; padding:14px 16px; box-shadow:0 1px 3px rgba(0,0,0,.08); margin-bottom:16px; }
  .card h2 { margin:0 0 4px; font-size:16px; }
  .sub { color:var(--muted); font-size:12px; }
  .pill { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; background:#e8ebf2; }
  .pill.ok { background:#dcf3e2; color:var(--ok); } .pill.bad { background:#fbe0e0; color:var(--bad); }
  .pill.ring { background:#fff0d6; color:var(--warn); } .pill.call { background:#dfe8fb; color:var(--accent); }
  .row { display:flex; flex-wrap:wrap; gap:6px; align-items:center; margin-top:10px; }
  button { font:inherit; padding:5px 12px; border-radius:6px; border:1px solid #c8cdd8; background:#fff; cursor:pointer; }
  button:hover { border-color:var(--accent); }
  button.primary { background:var(--accent); color:#fff; border-color:var(--accent); }
  button.accept { background:var(--ok); color:#fff; border-color:var(--ok); }
  button.reject { background:var(--bad); color:#fff; border-color:var(--bad); }
  input[type=number] { width:70px; font:inherit; padding:4px; }
  select { font:inherit; padding:4px; }
  dl { display:grid; grid-template-columns:130px 1fr; margin:8px 0 0; gap:2px 8px; font-size:13px; }
  dt { color:var(--muted); } dd { margin:0; word-break:break-all; }
  #phone { position:sticky; top:16px; }
  .phone-screen { border:8px solid #1d2330; border-radius:26px; padding:14px; min-height:360px; background:#fafbfd; text-align:center; }
  .phone-screen .big { font-size:18px; margin:18px 0 8px; }
  video { width:100%; background:#000; border-radius:8px; }
  .video-placeholder { margin-top:12px; height:150px; border-radius:8px; background:#1d2330; color:#9fb3d9;
    display:flex; align-items:center; justify-content:center; font-size:12px; }
  .video-placeholder[hidden] { display:none; }
  #log { font:12px ui-monospace, monospace; max-height:260px; overflow:auto; white-space:pre-wrap; }
  .error { color:var(--bad); min-height:1.4em; }
  .doorbell { display:grid; grid-template-columns: 220px 1fr; gap:12px; margin-top:10px; border-top:1px solid #e4e7ee; padding-top:10px; }
  .snapshot img { width:100%; border-radius:8px; background:#1d2330; display:block; }
  .snapshot .none { height:124px; border-radius:8px; background:#1d2330; color:#9fb3d9; display:flex; align-items:center; justify-content:center; font-size:12px; }
  table.dps { border-collapse:collapse; font-size:12px; width:100%; }
  table.dps td { padding:1px 6px; border-bottom:1px solid #eef0f4; word-break:break-all; }
  table.dps td:first-child { color:var(--muted); white-space:nowrap; }
  .pill.asleep { background:#e6e0f8; color:#5b3cc4; } .pill.waking { background:#fff0d6; color:var(--warn); }
\#(ConsoleCloudPanel.style)
</style>
</head>
<body>
<header><h1>ipcemu console</h1><span class="live" id="live">connecting…</span></header>
<main>
  <section>
    <div id="cloud" class="card" hidden></div>
    <div id="devices"></div>
    <div class="card"><h2>Events</h2><div id="log"></div></div>
  </section>
  <aside id="phone" class="card">
    <h2>Phone <span class="sub" id="phone-user"></span></h2>
    <div class="sub">An app user run by the server (in the household): a doorbell press rings it.</div>
    <div class="phone-screen">
      <div class="big" id="phone-state">…</div>
      <div id="phone-detail" class="sub"></div>
      <div class="row" style="justify-content:center">
        <button class="accept" id="phone-accept" hidden>Accept</button>
        <button class="reject" id="phone-reject" hidden>Reject</button>
        <button id="phone-hangup" hidden>Hang up</button>
        <button id="phone-stream" hidden title="switch the device's video between its main (HD) and sub (SD) stream">SD</button>
      </div>
      <!-- Live video: startVideo() attaches the device's WebRTC stream once the call is answered. -->
      <video id="phone-video" autoplay playsinline muted hidden></video>
      <div class="video-placeholder" id="phone-video-placeholder" hidden>live video arrives with WebRTC</div>
      <div class="sub" id="phone-video-note"></div>
      <div class="sub" id="phone-video-size"></div>
    </div>
    <div class="error" id="phone-error"></div>
  </aside>
</main>
<script>
"use strict";
const token = new URLSearchParams(location.search).get("token");
const state = { devices: [], phone: null, snapshots: {}, dpDraft: {} };

async function api(method, path, body) {
  const headers = { "Accept": "application/json" };
  if (token) headers["Authorization"] = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || ("HTTP " + r.status));
  return data;
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "onclick") e.onclick = v; else if (k === "class") e.className = v; else e.setAttribute(k, v);
  }
  for (const k of kids) e.append(k);
  return e;
}

function phasePill(phase, connected) {
  if (connected === false) return el("span", { class: "pill bad" }, "offline");
  const cls = { idle: "ok", ringingIncoming: "ring", ringingOutgoing: "ring", answered: "call" }[phase] || "";
  return el("span", { class: "pill " + cls }, phase);
}

function deviceCard(d) {
  const id = encodeURIComponent(d.devId);
  const err = el("div", { class: "error" });
  const act = (label, method, path, body, cls) => el("button", {
    class: cls || "", "data-action": label.toLowerCase().replace(/ /g, "-"), "data-device": d.devId,
    onclick: async () => { err.textContent = ""; try { await api(method, "/api/devices/" + id + path, typeof body === "function" ? body() : body); await refresh(); } catch (e) { err.textContent = e.message; } }
  }, label);
  const delay = el("input", { type: "number", min: "0", step: "100", value: String(d.faults.replyDelayMs) });
  const dropFor = el("input", { type: "number", min: "0", step: "1", value: "5" });
  const policy = el("select", {});
  for (const p of ["answer", "reject", "ignore", "busy", "manual"]) {
    const o = el("option", { value: p }, p); if (d.answerPolicy.split(":")[0] === p) o.selected = true; policy.append(o);
  }
  policy.onchange = async () => { try { await api("PUT", "/api/devices/" + id + "/answer-policy", { policy: policy.value }); await refresh(); } catch (e) { err.textContent = e.message; } };
  const s = d.session;
  const pressTargets = () => (state.phone && document.getElementById("ring-phone-" + d.devId)?.checked) ? { targets: [state.phone.userId] } : {};
  const ringPhone = el("input", { type: "checkbox", id: "ring-phone-" + d.devId, checked: "" });
  return el("div", { class: "card device", "data-device": d.devId },
    el("h2", {}, d.name + " ", phasePill(d.phase, d.connected)),
    el("div", { class: "sub" }, d.devId + " · " + d.category),
    el("dl", {},
      el("dt", {}, "session"), el("dd", {}, s ? s.sessionId + " (" + s.direction + ")" : "—"),
      el("dt", {}, "peers"), el("dd", {}, s ? s.peers.join(", ") : "—"),
      el("dt", {}, "answer policy"), el("dd", {}, d.answerPolicy),
      el("dt", {}, "P2P link"), el("dd", {}, d.media.p2pLink + (d.media.available ? "" : " (media not in this build)")),
      el("dt", {}, "camera"), el("dd", {}, d.media.camera.state + (d.media.camera.detail ? " (" + d.media.camera.detail + ")" : "")
        + (d.media.camera.losses ? ", lost " + d.media.camera.losses + "x" : "")),
      el("dt", {}, "last call"), el("dd", {}, d.lastCall ? d.lastCall.outcome + (d.lastCall.reason ? " (" + d.lastCall.reason + ")" : "") : "—"),
      el("dt", {}, "MQTT"), el("dd", {}, (d.connected ? "connected" : "down") + ", " + d.mqtt.reconnects + " reconnects")),
    el("div", { class: "row" },
      act("Press", "POST", "/press", pressTargets, "primary"),
      el("label", { class: "sub" }, ringPhone, " ring the console phone only"),
      act("Answer", "POST", "/answer"), act("Reject", "POST", "/reject"),
      act("Cancel", "POST", "/cancel"), act("Hang up", "POST", "/hangup")),
    el("div", { class: "row" }, el("span", { class: "sub" }, "policy"), policy),
    el("div", { class: "row" }, el("span", { class: "sub" }, "faults"),
      act(d.faults.heartbeatRepliesSuppressed ? "Answer heartbeats" : "Stop heartbeat replies", "PUT", "/faults", { heartbeatRepliesSuppressed: !d.faults.heartbeatRepliesSuppressed }),
      act(d.actingBusy ? "Stop acting busy" : "Act busy", "PUT", "/faults", { actingBusy: !d.actingBusy }),
      delay, act("Set reply delay (ms)", "PUT", "/faults", () => ({ replyDelayMs: Number(delay.value) || 0 })),
      dropFor, act("Drop MQTT (s)", "POST", "/faults/drop-connection", () => ({ seconds: Number(dropFor.value) || 0 })),
      act("Drop P2P", "POST", "/faults/drop-p2p")),
    doorbellPanel(d, act, err),
    err);
}

// PROTOCOL.md 8: a doorbell kind's power (awake/asleep/waking, battery), the last press or motion
// snapshot (from the mediaStored events, else DP 154's reference) served by the media route, its
// DPs (settable as the device's own changes), and the motion and wake actions.
function withToken(path) { return token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path; }
function dpSnapshotPath(d) {
  const ref = d.dps && (d.dps["154"] || d.dps["115"]);
  if (!ref) return null;
  try { const o = JSON.parse(atob(ref)); return (o.files && o.files[0] && o.files[0][0]) || null; } catch (e) { return null; }
}
const dpCodes = { 115: "movement_detect_pic", 134: "motion_switch", 136: "doorbell_active", 145: "wireless_electricity",
  146: "wireless_powermode", 147: "wireless_lowpower", 149: "wireless_awake", 150: "record_switch", 151: "record_mode",
  154: "doorbell_pic", 185: "alarm_message", 212: "initiative_message" };
function dpText(v) { return typeof v === "string" && v.length > 48 ? v.slice(0, 45) + "…" : JSON.stringify(v); }
function dpValue(text) {
  const t = text.trim();
  if (t === "true") return true; if (t === "false") return false;
  if (/^-?[0-9]+$/.test(t)) return Number(t);
  return t.startsWith('"') && t.endsWith('"') && t.length >= 2 ? t.slice(1, -1) : t;
}
function doorbellPanel(d, act, err) {
  if (!d.kind || (d.kind === "screen_ipc" && !d.dps)) return "";
  const id = encodeURIComponent(d.devId);
  const power = d.power || "awake";
  const snap = state.snapshots[d.devId] || (dpSnapshotPath(d) ? { path: dpSnapshotPath(d), what: "DP 154" } : null);
  const picture = snap
    ? el("div", {}, el("img", { id: "snapshot-" + d.devId, src: withToken(snap.path), alt: "press snapshot", "data-path": snap.path }),
        el("div", { class: "sub" }, (snap.what || "snapshot") + ": " + snap.path.split("/").pop()))
    : el("div", { class: "none" }, "no snapshot yet: press or motion");
  const draft = state.dpDraft[d.devId] || (state.dpDraft[d.devId] = { id: "134", value: "false" });
  const dpId = el("input", { type: "number", min: "1", value: draft.id, "data-dp": "id", style: "width:64px" });
  const dpVal = el("input", { type: "text", value: draft.value, "data-dp": "value", style: "width:90px" });
  dpId.oninput = () => { draft.id = dpId.value; }; dpVal.oninput = () => { draft.value = dpVal.value; };
  const battery = el("input", { type: "number", min: "0", max: "100", value: String(d.battery ?? 100), "data-dp": "battery" });
  const rows = Object.keys(d.dps || {}).sort((a, b) => Number(a) - Number(b)).map(k =>
    el("tr", { "data-dp-id": k }, el("td", {}, "DP " + k + " " + (dpCodes[k] || "")), el("td", {}, dpText(d.dps[k]))));
  const c = d.doorbellCounters;
  return el("div", { class: "doorbell", "data-kind": d.kind },
    el("div", { class: "snapshot" }, picture),
    el("div", {},
      el("div", {}, el("span", { class: "pill " + (power === "awake" ? "ok" : power), "data-power": power }, power), " ",
        el("span", { class: "sub" }, d.kind + (d.battery !== undefined ? " · battery " + d.battery + " %" : "")
          + (c ? " · presses " + c.presses + ", wakes " + c.wakes + ", dropped asleep " + c.droppedWhileAsleep + ", DP refusals " + c.dpRefusals : ""))),
      el("div", { class: "row" }, act("Motion", "POST", "/motion"), act("Wake", "POST", "/wake"),
        battery, act("Set battery (%)", "POST", "/battery", () => ({ percent: Number(battery.value) || 0 }))),
      el("div", { class: "row" }, el("span", { class: "sub" }, "set DP"), dpId, dpVal,
        el("button", { "data-action": "set-dp", onclick: async () => {
          err.textContent = "";
          try { await api("PUT", "/api/devices/" + id + "/dps", { dps: { [String(Number(dpId.value))]: dpValue(dpVal.value) } }); await refresh(); }
          catch (e) { err.textContent = e.message; }
        } }, "Set")),
      el("table", { class: "dps" }, ...rows)));
}

function renderDevices() {
  const box = document.getElementById("devices");
  box.replaceChildren(...state.devices.map(deviceCard));
}

function renderPhone() {
  const p = state.phone;
  const show = (id, on) => { document.getElementById(id).hidden = !on; };
  if (!p) {
    document.getElementById("phone-state").textContent = "no console phone";
    ["phone-accept", "phone-reject", "phone-hangup"].forEach(id => show(id, false));
    return;
  }
  document.getElementById("phone-user").textContent = p.userId;
  const st = document.getElementById("phone-state"), detail = document.getElementById("phone-detail");
  st.dataset.phase = p.phase;
  if (p.phase === "ringingIncoming") { st.textContent = (p.ringingFrom || "doorbell") + " is ringing"; detail.textContent = p.session.sessionId; }
  else if (p.phase === "answered") { st.textContent = "In call"; detail.textContent = p.session.sessionId; }
  else if (p.phase === "ringingOutgoing") { st.textContent = "Calling…"; detail.textContent = ""; }
  else { st.textContent = "Idle"; detail.textContent = p.lastCall ? "last call: " + p.lastCall.outcome : ""; }
  show("phone-accept", p.phase === "ringingIncoming");
  show("phone-reject", p.phase === "ringingIncoming");
  show("phone-hangup", p.phase === "answered");
  // HD/SD: the device's main or sub stream on the same link (302 resolution, PROTOCOL.md 4).
  const streamButton = document.getElementById("phone-stream");
  streamButton.hidden = !(p.phase === "answered" && p.video !== "none" && video.pc);
  streamButton.textContent = p.stream === "sub" ? "HD" : "SD";
  streamButton.dataset.stream = p.stream;
  if (p.phase === "answered") startVideo(p.session.sessionId); else stopVideo(false);
}

// Live video: once the phone's call is answered, the browser offers (receive-only video and
// audio, one bundled transport), waits for its ICE candidates so the offer carries them, and
// POSTs it to /api/phone/video; the server relays it to the device as this user (302 over MQTT)
// and returns the device's answer with its candidates merged in.
const video = { session: null, pc: null };
function videoNote(text) { document.getElementById("phone-video-note").textContent = text; }
function linkText() {
  const pc = video.pc;
  const server = state.phone && state.phone.video;
  return "P2P link: " + (pc ? pc.connectionState : "none") + (server ? " (device: " + server + ")" : "");
}
async function startVideo(session) {
  if (video.session === session) { if (video.pc) videoNote(linkText()); return; }
  stopVideo(false);
  video.session = session;
  const v = document.getElementById("phone-video");
  const placeholder = document.getElementById("phone-video-placeholder");
  placeholder.textContent = "connecting video…"; placeholder.hidden = false;
  if (typeof RTCPeerConnection === "undefined") { placeholder.textContent = "this browser has no WebRTC"; return; }
  const pc = new RTCPeerConnection({ bundlePolicy: "max-bundle", rtcpMuxPolicy: "require", iceServers: [] });
  video.pc = pc;
  pc.addTransceiver("video", { direction: "recvonly" });
  pc.addTransceiver("audio", { direction: "recvonly" });
  const stream = new MediaStream();
  v.onresize = () => {
    document.getElementById("phone-video-size").textContent = v.videoWidth ? "video " + v.videoWidth + "x" + v.videoHeight : "";
    v.dataset.size = v.videoWidth + "x" + v.videoHeight;
  };
  pc.ontrack = (e) => {
    stream.addTrack(e.track);
    if (v.srcObject !== stream) v.srcObject = stream;
    v.hidden = false; placeholder.hidden = true;
    v.play().catch(() => {});
  };
  pc.onconnectionstatechange = () => {
    document.getElementById("phone-video").dataset.link = pc.connectionState;
    videoNote(linkText());
    if (pc.connectionState === "connected" || pc.connectionState === "failed") refresh();
  };
  try {
    await pc.setLocalDescription(await pc.createOffer());
    await new Promise((resolve) => {
      if (pc.iceGatheringState === "complete") return resolve();
      const timer = setTimeout(resolve, 2000);
      pc.addEventListener("icegatheringstatechange", () => { if (pc.iceGatheringState === "complete") { clearTimeout(timer); resolve(); } });
    });
    if (video.pc !== pc) return;
    videoNote("P2P link: offering…");
    const reply = await api("POST", "/api/phone/video", { sdp: pc.localDescription.sdp });
    if (video.pc !== pc) return;
    await pc.setRemoteDescription({ type: "answer", sdp: reply.sdp });
    videoNote(linkText());
  } catch (e) {
    if (video.pc === pc) { placeholder.textContent = "no video: " + e.message; videoNote(""); }
  }
}
function stopVideo(tellServer) {
  const had = video.pc;
  if (video.pc) { video.pc.close(); video.pc = null; }
  video.session = null;
  const v = document.getElementById("phone-video"); v.hidden = true; v.srcObject = null; delete v.dataset.link;
  document.getElementById("phone-video-placeholder").hidden = true;
  videoNote("");
  document.getElementById("phone-video-size").textContent = ""; delete v.dataset.size;
  document.getElementById("phone-stream").hidden = true;
  if (had && tellServer) api("POST", "/api/phone/video/close").catch(() => {});
}

async function phoneAction(what) {
  const err = document.getElementById("phone-error"); err.textContent = "";
  try { state.phone = await api("POST", "/api/phone/" + what); renderPhone(); } catch (e) { err.textContent = e.message; }
}
document.getElementById("phone-accept").onclick = () => phoneAction("answer");
document.getElementById("phone-reject").onclick = () => phoneAction("reject");
document.getElementById("phone-hangup").onclick = () => phoneAction("hangup");
document.getElementById("phone-stream").onclick = async () => {
  const err = document.getElementById("phone-error"); err.textContent = "";
  const to = state.phone && state.phone.stream === "sub" ? "main" : "sub";
  try { state.phone = await api("POST", "/api/phone/video/resolution", { stream: to }); renderPhone(); } catch (e) { err.textContent = e.message; }
};

// One refresh at a time; one asked for meanwhile (an event while the GETs are out) runs again
// after it, or the page would keep what it read before that event (a doorbell left "awake").
let refreshing = null, refreshAgain = false;
async function refresh() {
  if (refreshing) { refreshAgain = true; return refreshing; }
  refreshing = (async () => {
    try {
      do {
        refreshAgain = false;
        state.devices = (await api("GET", "/api/devices")).devices;
        renderDevices();
        try { state.phone = await api("GET", "/api/phone"); } catch (e) { state.phone = null; }
        renderPhone();
      } while (refreshAgain);
    } finally { refreshing = null; }
  })();
  return refreshing;
}

function logLine(ev) {
  const log = document.getElementById("log");
  const t = new Date(ev.t || Date.now()).toISOString().slice(11, 23);
  let what = ev.type;
  if (ev.message) what += " " + ev.message.event + " " + (ev.type === "sent" ? "→ " + ev.message.targetId : "← " + ev.message.curId);
  if (ev.type === "phone") what = "phone " + ev.what + (ev.message ? " " + ev.message.event : "");
  if (ev.record) what += " " + ev.record.outcome;
  if (ev.doorbell) what += " " + ev.doorbell.event + (ev.doorbell.uid ? " " + ev.doorbell.uid : "") + (ev.doorbell.reason ? " (" + ev.doorbell.reason + ")" : "");
  if (ev.type === "pressed") what += " call " + ev.session;
  if (ev.dps) what += " " + Object.entries(ev.dps).map(([k, v]) => k + "=" + dpText(v)).join(" ");
  if (ev.type === "awake") what += " after " + ev.latencyMs + " ms";
  if (ev.type === "mediaStored") what += " " + ev.path;
  log.prepend(el("div", {}, t + "  " + (ev.device || ev.user || "") + "  " + what));
  while (log.childNodes.length > 200) log.lastChild.remove();
}

function connectEvents() {
  const es = new EventSource("/api/events" + (token ? "?token=" + encodeURIComponent(token) : ""));
  es.onopen = () => { document.getElementById("live").textContent = "live"; refresh(); };
  es.onerror = () => { document.getElementById("live").textContent = "reconnecting…"; };
  es.onmessage = (m) => {
    try {
      const ev = JSON.parse(m.data);
      // PROTOCOL.md 8.5: the newest press or motion snapshot of each device (a message is video).
      if (ev.type === "mediaStored" && ev.path && ev.path.endsWith(".jpg")) {
        state.snapshots[ev.device] = { path: ev.path, what: ev.name.startsWith("motion") ? "motion snapshot" : "press snapshot" };
      }
      logLine(ev);
    } catch (e) {}
    refresh();
  };
}

refresh();
connectEvents();
\#(ConsoleCloudPanel.script)
</script>
</body>
</html>
"""#
}
