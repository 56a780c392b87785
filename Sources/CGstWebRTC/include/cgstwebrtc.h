#ifndef IPCEMU_CGSTWEBRTC_H
#define IPCEMU_CGSTWEBRTC_H
/*
 * CGstWebRTC: a small C shim over GStreamer + webrtcbin for the WebRTCLink target.
 *
 * Swift cannot call variadic C (g_signal_emit_by_name, g_object_set/get) nor function-like macros
 * (g_signal_connect), and GstPromise replies need C to read. Each of those is wrapped here once,
 * with a name that says what it does (DESIGN.md, "Interop rules").
 *
 * GStreamer types stay opaque to Swift (they import as OpaquePointer); this header includes no
 * GStreamer header.
 *
 * Callbacks: every function that registers a callback takes a context pointer and a release
 * function. The shim calls `release(ctx)` exactly once, after the registration is gone and no call
 * of the callback is still running (GClosure / GSource / GstPromise destroy notifies). Swift passes
 * `Unmanaged.passRetained(box).toOpaque()` and a release that balances it. Callbacks run on
 * GStreamer's threads (streaming threads, webrtcbin's thread) or on the shared GLib loop thread;
 * data handed to them (strings, frame planes) lives only for the duration of the call.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct _GstElement CgwElement;
typedef struct _GstPad CgwPad;
typedef struct _GstSample CgwSample;

typedef void (*cgw_release_fn)(void *ctx);

/* ---- Process-wide: initialisation and the shared GLib main loop thread ---- */

/* gst_init, once per process (thread-safe; CGstCore's cgst_core_initialize, which every GStreamer
 * user of the process shares). On failure returns false and, if error_out is not NULL, a message to
 * free with cgw_free. */
bool cgw_initialize(char **error_out);
/* Initialises NSS for libsrtp with full-size tables before libsrtp does (cgw_srtp_crypto.c; called
 * by cgw_initialize). True when NSS was found and initialised here. */
bool cgw_prepare_srtp_crypto(void);
/* Starts the one GLib main loop thread of this process (idempotent). Bus watches and timers of
 * every link run on it, on a private GMainContext (not the global default one). */
void cgw_shared_loop_start(void);
/* True when the calling thread is the shared loop thread. */
bool cgw_on_shared_loop_thread(void);
/* A timer on the shared loop: tick returns true to keep going, false to stop. It fires at the
 * multiples of its interval on the monotonic clock (timers of one interval fire together; the
 * first tick comes within one interval). Returns a source id. */
typedef bool (*cgw_tick_fn)(void *ctx);
unsigned cgw_shared_loop_add_timer(unsigned interval_ms, cgw_tick_fn tick, void *ctx, cgw_release_fn release);
/* Runs `fn` once on the shared loop thread, as soon as possible. */
typedef void (*cgw_call_fn)(void *ctx);
void cgw_shared_loop_invoke(cgw_call_fn fn, void *ctx, cgw_release_fn release);
/* Removes a timer or watch added on the shared loop (safe from any thread; no-op for 0). */
void cgw_shared_loop_remove_source(unsigned source_id);

void cgw_free(void *pointer);
/* True on a thread that has run one of this shim's callbacks (a GStreamer streaming thread,
 * webrtcbin's thread, the shared loop): such a thread must not stop a pipeline synchronously. */
bool cgw_current_thread_runs_gstreamer_callbacks(void);
bool cgw_element_factory_exists(const char *factory_name);
/* Addresses of every local interface that is up, loopback included (IPv4, and IPv6 but not
 * link-local), one per line; free with cgw_free. */
char *cgw_local_interface_addresses(void);
/* CLOCK_REALTIME in nanoseconds (the clock the latency stamp of PROTOCOL.md section 6 uses). */
int64_t cgw_unix_time_ns(void);

/* ---- Pipelines and elements ---- */

/* gst_parse_launch; returns a pipeline (owned: release with cgw_element_unref) or NULL with error. */
CgwElement *cgw_pipeline_new_from_description(const char *description, char **error_out);
/* The same, not counted by cgw_live_pipeline_count (process-wide shared encoders, which outlive
 * the links that use them). */
CgwElement *cgw_pipeline_new_uncounted(const char *description, char **error_out);
/* A child by name, searched recursively; a new reference or NULL. */
CgwElement *cgw_bin_get_child(CgwElement *bin, const char *name);
void cgw_element_unref(CgwElement *element);
/* Sets PLAYING and waits (up to 5 s) for the state change to finish; false when it fails. */
bool cgw_pipeline_play(CgwElement *pipeline);
/* Sets NULL and waits for it: joins every streaming thread of the pipeline. */
void cgw_pipeline_stop(CgwElement *pipeline);
/* Current state: 1 NULL, 2 READY, 3 PAUSED, 4 PLAYING (0 pending/unknown). */
int cgw_element_current_state(CgwElement *element);
/* Running time of the element's pipeline clock in ns (clock time minus base time), or -1. */
int64_t cgw_element_running_time_ns(CgwElement *element);
/* The pipeline as a Graphviz graph (elements, states, caps); free with cgw_free. For debugging. */
char *cgw_pipeline_graph_dot(CgwElement *pipeline);
/* Counts how many GstPipeline objects of this process are alive and not in NULL state. */
int cgw_live_pipeline_count(void);

/* g_object_set / g_object_get wrappers. Each returns false if the object has no such property. */
bool cgw_object_set_string(void *object, const char *property, const char *value);
bool cgw_object_set_bool(void *object, const char *property, bool value);
bool cgw_object_set_int(void *object, const char *property, int64_t value);
bool cgw_object_set_uint(void *object, const char *property, uint64_t value);
/* Sets from a string like gst-launch does (enums by nick, numbers, booleans, caps). */
bool cgw_object_set_from_string(void *object, const char *property, const char *value);
/* Reads an int/uint/enum/bool/int64/uint64 property as int64; false if absent or another type. */
bool cgw_object_get_integer(void *object, const char *property, int64_t *value_out);

/* ---- Bus ---- */

enum { CGW_BUS_ERROR = 1, CGW_BUS_WARNING = 2, CGW_BUS_EOS = 3 };
typedef void (*cgw_bus_fn)(void *ctx, int kind, const char *source_name, const char *text);
/* Watches a pipeline's bus from the shared loop. Returns a source id for
 * cgw_shared_loop_remove_source. */
unsigned cgw_bus_watch(CgwElement *pipeline, cgw_bus_fn on_message, void *ctx, cgw_release_fn release);

/* ---- webrtcbin: signals emitted (g_signal_emit_by_name) and their GstPromise replies ---- */

enum { CGW_SDP_OFFER = 1, CGW_SDP_ANSWER = 2 };
enum {
    CGW_DIRECTION_INACTIVE = 1, CGW_DIRECTION_SENDONLY = 2,
    CGW_DIRECTION_RECVONLY = 3, CGW_DIRECTION_SENDRECV = 4
};
/* sdp is the description as text on success; error is non-NULL on failure. */
typedef void (*cgw_sdp_result_fn)(void *ctx, const char *sdp, const char *error);
typedef void (*cgw_done_fn)(void *ctx, const char *error);

void cgw_webrtc_create_offer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release);
void cgw_webrtc_create_answer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release);
/* Parse the SDP text and set it; false (and no callback) when the text is not SDP. */
bool cgw_webrtc_set_local_description(CgwElement *webrtc, int sdp_type, const char *sdp,
                                      cgw_done_fn done, void *ctx, cgw_release_fn release);
bool cgw_webrtc_set_remote_description(CgwElement *webrtc, int sdp_type, const char *sdp,
                                       cgw_done_fn done, void *ctx, cgw_release_fn release);
/* candidate: "candidate:..." (no "a=", no CRLF); "" means end of candidates. */
void cgw_webrtc_add_ice_candidate(CgwElement *webrtc, unsigned sdp_mline_index, const char *candidate);
/* Adds a transceiver with a direction and codec caps (caps as a string); false on bad caps. */
bool cgw_webrtc_add_transceiver(CgwElement *webrtc, int direction, const char *caps);
/* Number of transceivers, and per transceiver (by index): set direction, set codec preferences. */
int cgw_webrtc_transceiver_count(CgwElement *webrtc);
bool cgw_webrtc_set_transceiver_direction(CgwElement *webrtc, int index, int direction);
bool cgw_webrtc_set_transceiver_codec_preferences(CgwElement *webrtc, int index, const char *caps);
/* The transceiver's kind: 1 audio, 2 video, 0 unknown; and its m-line (-1 when not associated). */
int cgw_webrtc_transceiver_kind(CgwElement *webrtc, int index);
int cgw_webrtc_transceiver_mline(CgwElement *webrtc, int index);
/* Emits add-turn-server with a turn(s)://user:pass@host:port uri. */
bool cgw_webrtc_add_turn_server(CgwElement *webrtc, const char *uri);
/* Makes the ICE agent gather host candidates on this address (libnice then uses only the addresses
 * added this way, loopback included). Call before any description is set. */
bool cgw_webrtc_add_local_address(CgwElement *webrtc, const char *address);
/* Which transports the ICE agent gathers host candidates for (its ice-udp / ice-tcp properties). */
bool cgw_webrtc_set_ice_protocols(CgwElement *webrtc, bool udp, bool tcp);
/* Tunes webrtcbin's libnice agent before gathering: the pacing timer Ta in ms (stun-pacing-timer,
 * 20 ms by default: one connectivity check goes out per tick, so connecting takes a few ticks), and
 * UPnP IGD port mapping (libnice's upnp, on by default: a discovery thread per agent, and SSDP
 * multicast on the LAN at every gathering). False: no libnice agent, or it lacks the properties. */
bool cgw_webrtc_tune_ice_agent(CgwElement *webrtc, unsigned pacing_ms, bool upnp);
/* Makes webrtcbin's libnice agent nominate aggressively (RFC 5245 8.1.1.2: the controlling agent
 * puts USE-CANDIDATE in every check, so the first pair that answers is selected: one pacing tick
 * instead of three under regular nomination, which GStreamer 1.22 sets when it makes the agent).
 * Only the controlling agent (the offerer) nominates. Call before negotiation. True when the
 * agent now reads aggressive; false: no libnice agent, or it did not take. */
bool cgw_webrtc_nominate_aggressively(CgwElement *webrtc);
/* Whether webrtcbin's libnice agent nominates aggressively (false: regular, or no libnice agent). */
bool cgw_webrtc_nominates_aggressively(CgwElement *webrtc);
/* Sets the RTCP minimum interval of every RTP session of the webrtcbin (so that a receive-only peer
 * still reports at least this often); returns the number of sessions changed. */
int cgw_webrtc_set_rtcp_interval(CgwElement *webrtc, unsigned interval_ms);
/* Every RTP jitter buffer webrtcbin makes from now on starts pushing once `packets` consecutive
 * packets arrived (rtpjitterbuffer's faststart-min-packets) instead of holding its first packet
 * for the whole latency; with `after_queued_events`, each also gets
 * cgw_jitterbuffer_start_after_queued_events (below), without which that fast start is missed when
 * a whole first frame arrives at once. Call before negotiation. False: no rtpbin, or this
 * GStreamer's rtpjitterbuffer lacks the property (then nothing changes). */
bool cgw_webrtc_set_jitterbuffer_fast_start(CgwElement *webrtc, unsigned packets, bool after_queued_events);
/* Lets an rtpjitterbuffer's first packet in only once the serialized events queued ahead of it
 * (stream-start, caps, segment) have left its source pad, waiting at most its latency, once. In
 * GStreamer 1.22 its fast start is checked only as packets arrive and only with a packet at the head
 * of its queue, so a whole first frame that arrives before its thread has pushed those events waits
 * for the latency instead (docs/webrtc.md, "First frame, fifth pass"). False: not an element with
 * static sink and src pads (nothing done). */
bool cgw_jitterbuffer_start_after_queued_events(CgwElement *jitterbuffer);
/* GstWebRTCICETransportPolicy (webrtcbin's ice-transport-policy): RELAY makes the libnice agent
 * use relayed (TURN) local candidates only. Values checked against GStreamer's in cgw_negotiation.c. */
enum { CGW_ICE_TRANSPORT_POLICY_ALL = 0, CGW_ICE_TRANSPORT_POLICY_RELAY = 1 };
/* Sets ice-transport-policy and reads it back; false: no such property, or it did not take. */
bool cgw_webrtc_set_ice_transport_policy(CgwElement *webrtc, int policy);
/* One side of an ICE candidate pair: its type (NiceCandidateType, values checked against
 * libnice's), address as text and port. */
enum { CGW_CANDIDATE_HOST = 0, CGW_CANDIDATE_SERVER_REFLEXIVE = 1, CGW_CANDIDATE_PEER_REFLEXIVE = 2, CGW_CANDIDATE_RELAYED = 3 };
typedef struct {
    int type;
    char address[64];
    unsigned port;
} CgwCandidateInfo;
/* The pair the ICE agent selected on the first of its streams that has one (component 1: RTP,
 * rtcp-mux), copied into *local and *remote. False: no libnice agent, or no pair selected yet. */
bool cgw_webrtc_selected_pair(CgwElement *webrtc, CgwCandidateInfo *local, CgwCandidateInfo *remote);

/* ---- webrtcbin / element signals connected (g_signal_connect) ---- */

typedef void (*cgw_ice_candidate_fn)(void *ctx, unsigned sdp_mline_index, const char *candidate);
typedef void (*cgw_notify_fn)(void *ctx);
typedef void (*cgw_state_fn)(void *ctx, int state);
/* pad: a new src pad (borrowed); media "video"/"audio"/""; encoding_name e.g. "H264", "PCMA". */
typedef void (*cgw_pad_added_fn)(void *ctx, CgwPad *pad, const char *media, const char *encoding_name);

/* The states the cgw_state_fn callbacks below report, named as webrtcbin names them (the values of
 * GStreamer's enums, which this header does not include; cgstwebrtc.c checks each one at compile
 * time against GStreamer's own). */
/* GstWebRTCICEConnectionState */
enum {
    CGW_ICE_CONNECTION_NEW = 0, CGW_ICE_CONNECTION_CHECKING = 1, CGW_ICE_CONNECTION_CONNECTED = 2,
    CGW_ICE_CONNECTION_COMPLETED = 3, CGW_ICE_CONNECTION_FAILED = 4, CGW_ICE_CONNECTION_DISCONNECTED = 5,
    CGW_ICE_CONNECTION_CLOSED = 6
};
/* GstWebRTCPeerConnectionState */
enum {
    CGW_PEER_CONNECTION_NEW = 0, CGW_PEER_CONNECTION_CONNECTING = 1, CGW_PEER_CONNECTION_CONNECTED = 2,
    CGW_PEER_CONNECTION_DISCONNECTED = 3, CGW_PEER_CONNECTION_FAILED = 4, CGW_PEER_CONNECTION_CLOSED = 5
};
/* GstWebRTCICEGatheringState */
enum { CGW_ICE_GATHERING_NEW = 0, CGW_ICE_GATHERING_GATHERING = 1, CGW_ICE_GATHERING_COMPLETE = 2 };
/* GstWebRTCDTLSTransportState */
enum {
    CGW_DTLS_NEW = 0, CGW_DTLS_CLOSED = 1, CGW_DTLS_FAILED = 2, CGW_DTLS_CONNECTING = 3, CGW_DTLS_CONNECTED = 4
};

unsigned long cgw_connect_ice_candidate(CgwElement *webrtc, cgw_ice_candidate_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_connect_negotiation_needed(CgwElement *webrtc, cgw_notify_fn fn, void *ctx, cgw_release_fn release);
/* ice-connection-state: a CGW_ICE_CONNECTION_* value. */
unsigned long cgw_connect_ice_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release);
/* connection-state: a CGW_PEER_CONNECTION_* value. */
unsigned long cgw_connect_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release);
/* ice-gathering-state: a CGW_ICE_GATHERING_* value. */
unsigned long cgw_connect_ice_gathering_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_connect_pad_added(CgwElement *element, cgw_pad_added_fn fn, void *ctx, cgw_release_fn release);
/* The DTLS transport's state (a CGW_DTLS_* value). The transport exists once a description is set;
 * until then this returns 0, calls release at once, and should be tried again later. *transport_out gets a reference to the transport
 * (to disconnect from and then cgw_object_unref). */
unsigned long cgw_connect_dtls_transport_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release,
                                               void **transport_out);
void cgw_signal_disconnect(void *object, unsigned long handler_id);
void *cgw_object_ref(void *object);
void cgw_object_unref(void *object);

/* ---- Receive branches, frames, snapshots ---- */

/* Builds a bin from a gst-launch description, its unlinked pads ghosted ("sink"); returns it (owned)
 * or NULL with error. Register appsink callbacks on its children, then link it. */
CgwElement *cgw_bin_new_from_description(const char *description, char **error_out);
/* Adds the bin to the pipeline, starts it and links `pad` to its "sink" pad. The caller keeps its
 * own reference to the bin. */
bool cgw_link_pad_to_bin(CgwElement *pipeline, CgwPad *pad, CgwElement *bin, char **error_out);
/* Adds a bin to a pipeline that does not play yet (the bin follows the pipeline's state). */
bool cgw_pipeline_add_bin(CgwElement *pipeline, CgwElement *bin);
/* Links `pad` to the "sink" pad of a bin already in the pipeline (a receive branch built ahead). */
bool cgw_link_pad_to_added_bin(CgwPad *pad, CgwElement *bin, char **error_out);

/* Each decoded frame an appsink (caps video/x-raw,format=I420) receives: the sample (borrowed; take
 * it with cgw_sample_ref), its luma plane, size, stride, PTS and the arrival time (unix ns). */
typedef void (*cgw_video_frame_fn)(void *ctx, CgwSample *sample, const uint8_t *luma, int width,
                                    int height, int stride, int64_t pts_ns, int64_t arrival_unix_ns);
bool cgw_appsink_on_video_frame(CgwElement *appsink, cgw_video_frame_fn fn, void *ctx, cgw_release_fn release);
/* Each sample an appsink receives, counted only. */
bool cgw_appsink_on_sample(CgwElement *appsink, cgw_notify_fn fn, void *ctx, cgw_release_fn release);
CgwSample *cgw_sample_ref(CgwSample *sample);
void cgw_sample_unref(CgwSample *sample);
/* Encodes a raw video sample as JPEG; *out_bytes to free with cgw_free. */
bool cgw_sample_encode_jpeg(CgwSample *sample, uint8_t **out_bytes, size_t *out_length, char **error_out);

/* ---- Sending from appsrc ---- */

/* Copies the bytes into a buffer with this PTS/duration (ns, -1 for none) and pushes it.
 * delta_unit marks a non-key H.264 access unit. False when the appsrc refuses it (flushing, EOS). */
bool cgw_appsrc_push(CgwElement *appsrc, const void *bytes, size_t length, int64_t pts_ns,
                     int64_t duration_ns, bool delta_unit);
void cgw_appsrc_end_of_stream(CgwElement *appsrc);

/* ---- Sending through a pushed pad (cgw_pusher.c) ---- */
/* A source pad linked to the sink pad of `element_name` in `pipeline`, with `caps`, into which the
 * caller pushes on its own thread (the buffer runs the whole branch there). Its stream-start, caps
 * and segment (time; one event object shared by every pushed pad: cgw_bundle_events.c) are sent
 * ahead of the first buffer. Returns a reference (cgw_pad_unref), or
 * NULL with *error_out set. */
CgwPad *cgw_pusher_attach(CgwElement *pipeline, const char *element_name, const char *caps, char **error_out);
/* Pushes a copy of `bytes` (pts/duration in ns, -1 for none; delta_unit as cgw_appsrc_push). False
 * when the branch refused it (not playing yet, flushing, an error downstream). */
bool cgw_pusher_push(CgwPad *pad, const void *bytes, size_t length, int64_t pts_ns, int64_t duration_ns,
                     bool delta_unit);
/* Deactivates and unlinks the pad (pushes after it return false). */
void cgw_pusher_detach(CgwPad *pad);

/* ---- One payloader per feed, RTP copies per link (cgw_rtp_feed.c) ---- */
/* A feed's rtph264pay (config-interval -1, aggregate-mode zero-latency), run on the caller's
 * thread. NULL with *error_out set. */
typedef struct CgwH264Packetizer CgwH264Packetizer;
/* The RTP packets of one access unit (a GstBufferList), shared by every link that sends it. */
typedef struct CgwRtpPackets CgwRtpPackets;
CgwH264Packetizer *cgw_h264_packetizer_new(char **error_out);
void cgw_h264_packetizer_free(CgwH264Packetizer *packetizer);
/* The packets of one Annex B access unit (a reference, cgw_rtp_packets_unref), timed by the feed's
 * own clock; NULL when the payloader made none. Safe from any thread (serialised). */
CgwRtpPackets *cgw_h264_packetize(CgwH264Packetizer *packetizer, const void *bytes, size_t length, bool delta_unit);
unsigned cgw_rtp_packets_count(CgwRtpPackets *packets);
void cgw_rtp_packets_unref(CgwRtpPackets *packets);
/* Takes `element_name` (a stand-in linked to webrtcbin's sink pad in the description) out of
 * `pipeline` and links a pushed pad with `caps` (application/x-rtp with its payload type; the
 * link's random SSRC is added, and written to *ssrc_out) to that sink pad. Returns a reference
 * (cgw_pad_unref), or NULL with *error_out set. */
CgwPad *cgw_rtp_pusher_attach(CgwElement *pipeline, const char *element_name, const char *caps,
                              uint32_t *ssrc_out, char **error_out);
/* Pushes the link's copies of `packets` as one buffer list: its SSRC and payload type, its next
 * sequence numbers, the packets' timestamps plus its offset (moved so that they go on from its
 * last one when `source`, the feed, is not the last one's), PTS `pts_ns` (-1 for none). False when
 * the branch refused them or nothing could be copied. Calls for one pad must not overlap. */
bool cgw_rtp_pusher_push(CgwPad *pad, CgwRtpPackets *packets, uint64_t source, int64_t pts_ns);

/* ---- The events a link sends down its bundle (cgw_bundle_events.c) ---- */
/* Drops webrtcbin's "GstWebRtcBinUpdateTos" events at its sink pads (the pads present now), so its
 * bundle funnel has no custom sticky event to re-send at each switch between audio and video.
 * Only for links whose senders keep the default priority (DSCP 0). Returns the pads probed. */
int cgw_webrtc_drop_tos_events(CgwElement *webrtc);
/* Tests: counts the segment and custom sticky events leaving webrtcbin's rtpfunnel from now on
 * (after negotiation, when the funnel exists). False when there is no funnel or already counting. */
bool cgw_webrtc_count_bundled_events(CgwElement *webrtc);
/* The count so far, or -1 when not counting. */
int cgw_webrtc_bundled_events(CgwElement *webrtc);

/* ---- Probes: counting what flows ---- */

CgwPad *cgw_element_get_static_pad(CgwElement *element, const char *name);
void cgw_pad_unref(CgwPad *pad);
/* Calls fn for each buffer (or buffer list) through a pad: buffer count, bytes, and how many were
 * key units (no DELTA_UNIT flag). Returns a probe id. */
typedef void (*cgw_buffers_fn)(void *ctx, unsigned buffers, size_t bytes, unsigned key_units);
unsigned long cgw_pad_count_buffers(CgwPad *pad, cgw_buffers_fn fn, void *ctx, cgw_release_fn release);
/* Counts the RTCP packets that arrive from the peer (a probe on the rtcp_src pad of each of
 * webrtcbin's transport receive bins). Transports appear during negotiation: call again later;
 * bins already probed are skipped. Returns how many new probes were added. */
int cgw_webrtc_count_received_rtcp(CgwElement *webrtc, cgw_buffers_fn fn, void *ctx, cgw_release_fn release);
/* webrtcbin 1.22 starts the ICE source of a transport before the rest of its receive path; when
 * a packet meets a pad that is not active yet, the source's task (or the queue's after it) stops
 * for good and nothing is received again. This finds such stalled elements and restarts them
 * (READY then PLAYING). Returns how many were restarted. */
int cgw_webrtc_restart_stalled_receivers(CgwElement *webrtc);
/* Sends a GstForceKeyUnit event upstream from a pad (on a receive path this makes the RTP session
 * send a PLI/FIR to the peer). */
bool cgw_pad_request_key_unit_upstream(CgwPad *pad);
/* Calls fn each time a GstForceKeyUnit event travels upstream through the pad (on a send path:
 * the RTP session got a PLI/FIR, or the payloader asked). The event goes on unchanged. */
unsigned long cgw_pad_on_key_unit_request(CgwPad *pad, cgw_notify_fn fn, void *ctx, cgw_release_fn release);

/* Counts received H.264 access units at the RTP level on a sink's "sink" pad (the app's counted
 * links: no depayloader, no queue): fn(ctx, key_frame, missing, late) at each packet with the
 * marker bit, key_frame when a packet of that access unit carried an IDR slice; missing: packets
 * the RTP sequence numbers skipped since the last call, late: packets that came behind one already
 * seen (reordered or repeated); timestamp_advance: how far the RTP timestamp moved since the last
 * access unit (0 for the first, or when it went back). cgw_rtp_counting.c. */
typedef void (*cgw_access_unit_fn)(void *ctx, bool key_frame, unsigned missing, unsigned late, uint32_t timestamp_advance);
bool cgw_sink_count_rtp_access_units(CgwElement *sink, cgw_access_unit_fn fn, void *ctx, cgw_release_fn release);
/* One RTP packet of H.264 (RFC 6184): 1 when it ends an access unit (marker bit), 0 when not, -1
 * when it is not an RTP packet with a payload; *carries_idr: it holds an IDR slice (NAL type 5),
 * itself, in a STAP-A, or as an FU-A's start fragment. */
int cgw_rtp_h264_packet_kind(const uint8_t *packet, size_t length, bool *carries_idr);
/* One step of the sequence check: the first packet sets *next; a later one `sequence` at or after
 * *next adds the skipped ones to *missing and moves *next past it; one before *next (by less than
 * half the 16-bit space) adds 1 to *late. */
void cgw_rtp_sequence_step(bool *have, uint16_t *next, uint16_t sequence, unsigned *missing, unsigned *late);
/* A counted link's receive path without jitter buffers: every jitter buffer webrtcbin's rtpbin
 * makes from now on is a pass-through (packets go on in the thread that brought them, no task, no
 * timer thread). Call before negotiation. False: no rtpbin, or no "request-jitterbuffer" signal
 * (GStreamer < 1.18; nothing changes). cgw_rtp_passthrough.c. */
bool cgw_webrtc_receive_without_jitterbuffers(CgwElement *webrtc);

/* ---- Encoded output of a shared encoder ---- */

/* Each buffer an appsink receives, mapped: its bytes (borrowed for the call), PTS (ns, -1 none),
 * and whether it is a key unit (no DELTA_UNIT flag). */
typedef void (*cgw_encoded_fn)(void *ctx, const uint8_t *bytes, size_t length, int64_t pts_ns, bool key_unit);
bool cgw_appsink_on_buffer(CgwElement *appsink, cgw_encoded_fn fn, void *ctx, cgw_release_fn release);

/* ---- Outputs of the device's screen and sound: cgst_display.h ---- */
#include "cgst_display.h"
/* ---- Data channels (PROTOCOL.md 7; implemented in cgst_datachannel.c) ---- */

/* A channel is a GstWebRTCDataChannel, opaque here (void *); each function below that returns or
 * hands over one gives a reference: drop it with cgw_object_unref. */
typedef void (*cgw_data_channel_fn)(void *ctx, void *channel, const char *label);
typedef void (*cgw_data_channel_text_fn)(void *ctx, const char *text);
typedef void (*cgw_data_channel_bytes_fn)(void *ctx, const uint8_t *bytes, size_t length);
/* webrtcbin's on-data-channel: a channel the peer opened (connect before the remote description is
 * set). The callback gets a new reference to the channel and its label. */
unsigned long cgw_connect_data_channel(CgwElement *webrtc, cgw_data_channel_fn fn, void *ctx, cgw_release_fn release);
/* create-data-channel (before the offer is made, so that it has an m=application line): a new
 * reference or NULL. */
void *cgw_webrtc_create_data_channel(CgwElement *webrtc, const char *label, bool ordered);
/* One channel's signals (on-open, on-close, on-error, on-message-string, on-message-data). Each
 * returns a handler id for cgw_signal_disconnect; on a NULL channel, 0 after calling release. */
unsigned long cgw_data_channel_on_open(void *channel, cgw_notify_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_data_channel_on_close(void *channel, cgw_notify_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_data_channel_on_error(void *channel, cgw_data_channel_text_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_data_channel_on_text(void *channel, cgw_data_channel_text_fn fn, void *ctx, cgw_release_fn release);
unsigned long cgw_data_channel_on_bytes(void *channel, cgw_data_channel_bytes_fn fn, void *ctx, cgw_release_fn release);
/* GstWebRTCDataChannelState (0 for a NULL channel). */
enum {
    CGW_DATA_CHANNEL_CONNECTING = 1, CGW_DATA_CHANNEL_OPEN = 2, CGW_DATA_CHANNEL_CLOSING = 3,
    CGW_DATA_CHANNEL_CLOSED = 4
};
int cgw_data_channel_ready_state(void *channel);
/* Bytes queued to send and not yet handed to SCTP. */
uint64_t cgw_data_channel_buffered_amount(void *channel);
/* Send one text / binary message; false when the channel is not open. */
bool cgw_data_channel_send_text(void *channel, const char *text);
bool cgw_data_channel_send_bytes(void *channel, const uint8_t *bytes, size_t length);
void cgw_data_channel_close(void *channel);
/* For the shim's own C files: marks the calling thread as one that runs GStreamer callbacks. */
void cgw_mark_callback_thread(void);

#endif
