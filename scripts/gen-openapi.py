#!/usr/bin/env python3
# Writes Sources/ControlAPI/OpenAPIDocument.swift: the control API's OpenAPI document, by hand.
# Edit this file, run it, commit both. ControlAPITests check the document against the live server.
import json, os
def ref(n): return {"$ref": "#/components/schemas/"+n}
def nullable(s):
    if "$ref" in s: return {"nullable": True, "allOf": [s]}  # siblings of $ref are ignored in 3.0
    s=dict(s); s["nullable"]=True; return s
S=lambda **k: {"type":"string", **k}
I=lambda **k: {"type":"integer", **k}
N=lambda **k: {"type":"number", **k}
B=lambda **k: {"type":"boolean", **k}
def obj(props, required=None, extra=False, **k):
    o={"type":"object","properties":props,"required":sorted(required if required is not None else props.keys())}
    if not extra: o["additionalProperties"]=False
    o.update(k); return o
def arr(items, **k): return {"type":"array","items":items, **k}
strs=arr(S())
schemas={
 "Error": obj({"error":S(description="What was wrong."),"field":nullable(S(description="The request field it is about, or null."))}),
 "Session": obj({"sessionId":S(),"direction":S(enum=["incoming","outgoing"]),"phase":S(enum=["ringingIncoming","ringingOutgoing","answered"]),
   "callType":I(enum=[1,2,3]),"peers":strs,"activePeers":strs,"peersRinging":strs,"answeredBy":nullable(S()),
   "deadline":I(description="unix ms"),"startedAt":I(),"answeredAt":nullable(I()),"mediaLink":S(enum=["none","connecting","up","lost"])}),
 "CallRecord": obj({"sessionId":S(),"direction":S(enum=["incoming","outgoing"]),"peers":strs,"answeredBy":nullable(S()),"callType":I(enum=[1,2,3]),
   "startedAt":I(),"answeredAt":nullable(I()),"endedAt":I(),"outcome":S(enum=["hungUp","cancelled","rejected","busy","notAnswered","answeredElsewhere","rejectedElsewhere","stopped"]),
   "endedBy":S(enum=["local","remote"]),"reason":nullable(S()),"sdkError":nullable(I())}),
 "Faults": obj({"heartbeatRepliesSuppressed":B(),"replyDelayMs":I(minimum=0),"actingBusy":B()}),
 "DeviceState": obj({"devId":S(),"name":S(),"category":S(),"connected":B(description="MQTT connection up"),
   "phase":S(enum=["idle","ringingIncoming","ringingOutgoing","answered","shutDown"]),
   "session":nullable(ref("Session")),"peers":strs,"answerPolicy":S(description="answer, answer:SECONDS, reject, ignore, busy or manual"),
   "actingBusy":B(),"callsEnded":I(),"lastCall":nullable(ref("CallRecord")),"household":strs,"faults":ref("Faults"),
   "media":obj({"p2pLink":S(enum=["none","connecting","up","lost"]),"framesSent":I(),"framesReceived":I(),"fps":N(),"available":B(description="true: this build has the WebRTC media link")}),
   "mqtt":obj({"reconnects":I(),"messagesIn":I(),"messagesOut":I()})}),
 "DeviceList": obj({"devices":arr(ref("DeviceState"))}),
 "PressRequest": obj({"targets":arr(S(minLength=1),description="App users to call (default: the household)"),"callType":I(enum=[1,2,3]),
   "timeout":N(description="Seconds the call rings (default: the profile's callTimeout)",exclusiveMinimum=True,minimum=0,maximum=3600)},required=[]),
 "PressReply": obj({"sessionId":S(),"device":ref("DeviceState")}),
 "AnswerPolicyRequest": obj({"policy":S(enum=["answer","reject","ignore","busy","manual"]),"afterSeconds":N(minimum=0,maximum=3600,description="answer only")},required=["policy"]),
 "FaultsRequest": obj({"heartbeatRepliesSuppressed":B(),"replyDelayMs":I(minimum=0,maximum=600000),"actingBusy":B()},required=[]),
 "DropConnectionRequest": obj({"seconds":N(minimum=0,maximum=3600)}),
 "DropConnectionReply": obj({"dropped":B(),"seconds":N()}),
 "DropP2PReply": obj({"dropped":I(description="How many P2P links were closed.")}),
 "JournalEntry": obj({"t":I(description="unix ms"),"time":S(format="date-time"),"device":S(),"kind":S(enum=["event","call"]),"session":S(),
   "direction":S(description="event: in or out; call: incoming or outgoing"),"event":S(),"peer":S(),"reason":nullable(S()),"callType":I(),
   "outcome":S(),"endedBy":S(),"peers":strs,"answeredBy":nullable(S()),"startedAt":I(),"answeredAt":nullable(I()),"endedAt":I()},
   required=["t","time","device","kind","session","direction"]),
 "Journal": obj({"devId":S(),"file":nullable(S()),"entries":arr(ref("JournalEntry"))}),
 "PhoneState": obj({"userId":S(),"phase":S(enum=["idle","ringingIncoming","ringingOutgoing","answered","shutDown"]),"session":nullable(ref("Session")),
   "ringingFrom":nullable(S()),"lastCall":nullable(ref("CallRecord")),"video":S(enum=["none","negotiating","connecting","up","lost","closed","refused"],description="The browser's live video link of the answered call: none, negotiating (offer sent), connecting (answer returned), up/lost (the device's view of the P2P link), closed (by either side), refused (the device sent disconnect)"),
   "stream":S(enum=["main","sub"],description="The stream the browser's link shows: main after the offer, then what the HD/SD button asked for (302 resolution)")}),
 "ResolutionRequest": obj({"stream":S(enum=["main","sub"],description="main (stream_type 0, HD) or sub (1, SD)")}),
 "VideoOffer": obj({"sdp":S(description="The browser's WebRTC offer (receive-only video and audio, bundle, ICE gathering complete so its candidates are in it)")}),
 "VideoAnswer": obj({"sdp":S(description="The device's answer, with the candidates it sent merged in as a=candidate lines"),"phone":ref("PhoneState")}),
}
def jr(schema_name, desc): return {"description":desc,"content":{"application/json":{"schema":ref(schema_name)}}}
E=lambda d: jr("Error", d)
devparam={"name":"devId","in":"path","required":True,"schema":S()}
def op(summary, responses, body=None, params=None, tag="devices"):
    o={"summary":summary,"tags":[tag],"responses":responses}
    if params: o["parameters"]=params
    if body: o["requestBody"]={"required":False,"content":{"application/json":{"schema":ref(body)}}}
    return o
nf=E("No device with that devId")
conflict=E("Makes no sense in the current state (the engine's error)")
bad=E("Bad request; `field` names the field")
paths={
 "/": {"get": op("The web console (HTML, everything served by the binary)",{"200":{"description":"HTML page","content":{"text/html":{"schema":S()}}}},tag="console")},
 "/openapi.json": {"get": op("This document",{"200":{"description":"OpenAPI 3.0 document","content":{"application/json":{"schema":{"type":"object"}}}}},tag="meta")},
 "/metrics": {"get": op("Prometheus metrics (text format 0.0.4)",{"200":{"description":"Prometheus text","content":{"text/plain":{"schema":S()}}}},tag="meta")},
 "/api/devices": {"get": op("Every device in the process, with its state",{"200":jr("DeviceList","The devices")})},
 "/api/devices/{devId}": {"get": op("One device's state",{"200":jr("DeviceState","State"),"404":nf},params=[devparam])},
 "/api/devices/{devId}/press": {"post": op("Press the doorbell: call targets (default: the household)",{"200":jr("PressReply","Calling"),"400":bad,"404":nf,"409":conflict},body="PressRequest",params=[devparam])},
}
for a,s in [("answer","Answer the ringing incoming call"),("reject","Reject the ringing incoming call"),("cancel","Cancel the outgoing call before an answer"),("hangup","Hang up the answered call")]:
    paths["/api/devices/{devId}/"+a]={"post":op(s,{"200":jr("DeviceState","Done; the new state"),"404":nf,"409":conflict},params=[devparam])}
paths["/api/devices/{devId}/answer-policy"]={"put":op("Set the answer policy",{"200":jr("DeviceState","Set"),"400":bad,"404":nf,"409":conflict},body="AnswerPolicyRequest",params=[devparam])}
paths["/api/devices/{devId}/faults"]={
 "get":op("Faults in force",{"200":jr("Faults","Faults"),"404":nf},params=[devparam],tag="faults"),
 "put":op("Set faults (fields left out stay as they are): stop answering heartbeats, delay every reply, act busy",{"200":jr("Faults","Faults now in force"),"400":bad,"404":nf,"409":conflict},body="FaultsRequest",params=[devparam],tag="faults")}
paths["/api/devices/{devId}/faults/drop-connection"]={"post":op("Drop the MQTT connection without DISCONNECT (the broker publishes the will) and reconnect after `seconds`",{"202":jr("DropConnectionReply","Dropped"),"400":bad,"404":nf},body="DropConnectionRequest",params=[devparam],tag="faults")}
paths["/api/devices/{devId}/faults/drop-p2p"]={"post":op("Drop every P2P media link of the device as if the network failed; unless the app reconnects within 5 s the device sends stop disconnected (PROTOCOL.md 3.3)",{"202":jr("DropP2PReply","Dropped"),"404":nf},params=[devparam],tag="faults")}
paths["/api/devices/{devId}/journal"]={"get":op("The call journal: recent entries, oldest first",{"200":jr("Journal","Entries"),"400":bad,"404":nf},params=[devparam,{"name":"limit","in":"query","required":False,"schema":I(minimum=1,maximum=10000,default=100)}])}
paths["/api/events"]={"get":op("Server-sent events: every call event of every device (or of `device`), and the console phone's (type phone). Each `data:` line is one JSON object with `type`, `device`, `t`.",
  {"200":{"description":"text/event-stream","content":{"text/event-stream":{"schema":S()}}},"404":E("No such device")},
  params=[{"name":"device","in":"query","required":False,"schema":S()}],tag="events")}
paths["/api/phone"]={"get":op("The console phone (an app user run by the server, in the household)",{"200":jr("PhoneState","State"),"404":E("No console phone in this process")},tag="console")}
for a,s in [("answer","Accept the call ringing the console phone"),("reject","Reject the call ringing the console phone"),("hangup","Hang up the console phone's call")]:
    paths["/api/phone/"+a]={"post":op(s,{"200":jr("PhoneState","Done"),"404":E("No console phone"),"409":conflict},tag="console")}
paths["/api/phone/video"]={"post":{**op("Live video of the console phone's answered call: relays the browser's offer to the device as the console user (302 offer over MQTT, auth from the device's secrets) and returns the device's answer with its candidates (collected until end-of-candidates or 1.5 s)",
  {"200":jr("VideoAnswer","The device's answer"),"400":bad,"404":E("No console phone"),"409":conflict,"502":E("The device refused the offer (disconnect) or could not be reached"),"504":E("No answer from the device in time")},tag="console"),
  "requestBody":{"required":True,"content":{"application/json":{"schema":ref("VideoOffer")}}}}}
paths["/api/phone/video/resolution"]={"post":{**op("The HD/SD button: switch the console phone's live video link between the device's main and sub stream (302 resolution to the device, PROTOCOL.md 4; no new offer)",
  {"200":jr("PhoneState","Sent; the phone's state with the stream asked for"),"400":bad,"404":E("No console phone"),"409":E("The console phone has no video link"),"502":E("The message could not be sent to the device")},tag="console"),
  "requestBody":{"required":True,"content":{"application/json":{"schema":ref("ResolutionRequest")}}}}}
paths["/api/phone/video/close"]={"post":op("Close the console phone's video link (302 disconnect to the device); nothing to close is not an error",{"200":jr("PhoneState","Closed"),"404":E("No console phone")},tag="console")}
doc={"openapi":"3.0.3","info":{"title":"ipcemu control API","version":"1.0.0",
 "description":"Drive emulated doorbells (Tuya-style IPC with screen): state, doorbell presses, answers, faults, the call journal, live events. Listens on 127.0.0.1 unless `--control` says otherwise; any other address needs `--control-token`, and then every request needs `Authorization: Bearer TOKEN` (or `?token=TOKEN`), else 401. Errors are JSON: {\"error\": \"...\", \"field\": \"...\"|null}; unknown device 404; an action that makes no sense in the current state 409."},
 "servers":[{"url":"http://127.0.0.1:8080"}],
 "security":[{},{"bearerAuth":[]}],
 "paths":paths,
 "components":{"schemas":schemas,"securitySchemes":{"bearerAuth":{"type":"http","scheme":"bearer"}},
   "responses":{"Unauthorized":E("Missing or wrong bearer token (only when the server has a token)")}}}
text=json.dumps(doc,indent=2,sort_keys=False)
assert '"""#' not in text
open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'Sources', 'ControlAPI', 'OpenAPIDocument.swift'),'w').write('''/// The control API's OpenAPI 3.0 document, written by hand and served at /openapi.json. The
/// ControlAPITests check it against the live server both ways (every documented operation answers
/// with a documented status and shape; every route the server has is documented).
enum OpenAPIDocument {
    static let json = #"""
''' + text + '''
"""#
}
''')
