/* CGstWebRTC, webrtcbin: offers, answers, candidates, transceivers and its signals. See
 * include/cgstwebrtc.h for the contract of each function. */
#include "cgw_internal.h"

/* The header names webrtcbin's states without including GStreamer: each name must be GStreamer's. */
#define CGW_SAME_VALUE(ours, theirs) _Static_assert((int)(ours) == (int)(theirs), #ours " is not " #theirs)
CGW_SAME_VALUE(CGW_ICE_CONNECTION_NEW, GST_WEBRTC_ICE_CONNECTION_STATE_NEW);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CHECKING, GST_WEBRTC_ICE_CONNECTION_STATE_CHECKING);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CONNECTED, GST_WEBRTC_ICE_CONNECTION_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_COMPLETED, GST_WEBRTC_ICE_CONNECTION_STATE_COMPLETED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_FAILED, GST_WEBRTC_ICE_CONNECTION_STATE_FAILED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_DISCONNECTED, GST_WEBRTC_ICE_CONNECTION_STATE_DISCONNECTED);
CGW_SAME_VALUE(CGW_ICE_CONNECTION_CLOSED, GST_WEBRTC_ICE_CONNECTION_STATE_CLOSED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_NEW, GST_WEBRTC_PEER_CONNECTION_STATE_NEW);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CONNECTING, GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CONNECTED, GST_WEBRTC_PEER_CONNECTION_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_DISCONNECTED, GST_WEBRTC_PEER_CONNECTION_STATE_DISCONNECTED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_FAILED, GST_WEBRTC_PEER_CONNECTION_STATE_FAILED);
CGW_SAME_VALUE(CGW_PEER_CONNECTION_CLOSED, GST_WEBRTC_PEER_CONNECTION_STATE_CLOSED);
CGW_SAME_VALUE(CGW_ICE_GATHERING_NEW, GST_WEBRTC_ICE_GATHERING_STATE_NEW);
CGW_SAME_VALUE(CGW_ICE_GATHERING_GATHERING, GST_WEBRTC_ICE_GATHERING_STATE_GATHERING);
CGW_SAME_VALUE(CGW_ICE_GATHERING_COMPLETE, GST_WEBRTC_ICE_GATHERING_STATE_COMPLETE);
CGW_SAME_VALUE(CGW_DTLS_NEW, GST_WEBRTC_DTLS_TRANSPORT_STATE_NEW);
CGW_SAME_VALUE(CGW_DTLS_CLOSED, GST_WEBRTC_DTLS_TRANSPORT_STATE_CLOSED);
CGW_SAME_VALUE(CGW_DTLS_FAILED, GST_WEBRTC_DTLS_TRANSPORT_STATE_FAILED);
CGW_SAME_VALUE(CGW_DTLS_CONNECTING, GST_WEBRTC_DTLS_TRANSPORT_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_DTLS_CONNECTED, GST_WEBRTC_DTLS_TRANSPORT_STATE_CONNECTED);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CONNECTING, GST_WEBRTC_DATA_CHANNEL_STATE_CONNECTING);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_OPEN, GST_WEBRTC_DATA_CHANNEL_STATE_OPEN);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CLOSING, GST_WEBRTC_DATA_CHANNEL_STATE_CLOSING);
CGW_SAME_VALUE(CGW_ICE_TRANSPORT_POLICY_ALL, GST_WEBRTC_ICE_TRANSPORT_POLICY_ALL);
CGW_SAME_VALUE(CGW_ICE_TRANSPORT_POLICY_RELAY, GST_WEBRTC_ICE_TRANSPORT_POLICY_RELAY);
CGW_SAME_VALUE(CGW_CANDIDATE_HOST, NICE_CANDIDATE_TYPE_HOST);
CGW_SAME_VALUE(CGW_CANDIDATE_SERVER_REFLEXIVE, NICE_CANDIDATE_TYPE_SERVER_REFLEXIVE);
CGW_SAME_VALUE(CGW_CANDIDATE_PEER_REFLEXIVE, NICE_CANDIDATE_TYPE_PEER_REFLEXIVE);
CGW_SAME_VALUE(CGW_CANDIDATE_RELAYED, NICE_CANDIDATE_TYPE_RELAYED);
CGW_SAME_VALUE(CGW_DATA_CHANNEL_CLOSED, GST_WEBRTC_DATA_CHANNEL_STATE_CLOSED);

/* ------------------------------------------------------------------------------------------------
 * webrtcbin: emitted signals and promises
 * ---------------------------------------------------------------------------------------------- */

static gchar *promise_error_text(GstPromise *promise, GstPromiseResult result) {
    if (result != GST_PROMISE_RESULT_REPLIED) return g_strdup_printf("promise not replied (result %d)", (int)result);
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply == NULL) return NULL;
    if (gst_structure_has_field(reply, "error")) {
        GError *err = NULL;
        gst_structure_get(reply, "error", G_TYPE_ERROR, &err, NULL);
        gchar *text = g_strdup(err != NULL ? err->message : "error");
        g_clear_error(&err);
        return text;
    }
    return NULL;
}

static void sdp_promise_changed(GstPromise *promise, gpointer data, const char *field) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    cgw_sdp_result_fn fn = (cgw_sdp_result_fn)cb->fn;
    GstPromiseResult result = gst_promise_wait(promise);
    gchar *error = promise_error_text(promise, result);
    if (error != NULL) {
        fn(cb->ctx, NULL, error);
        g_free(error);
        return;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    GstWebRTCSessionDescription *desc = NULL;
    if (reply != NULL) gst_structure_get(reply, field, GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &desc, NULL);
    if (desc == NULL || desc->sdp == NULL) {
        fn(cb->ctx, NULL, "no session description in the reply");
    } else {
        gchar *text = gst_sdp_message_as_text(desc->sdp);
        fn(cb->ctx, text, NULL);
        g_free(text);
    }
    if (desc != NULL) gst_webrtc_session_description_free(desc);
}

static void offer_promise_changed(GstPromise *promise, gpointer data) { sdp_promise_changed(promise, data, "offer"); }
static void answer_promise_changed(GstPromise *promise, gpointer data) { sdp_promise_changed(promise, data, "answer"); }

void cgw_webrtc_create_offer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release) {
    GstPromise *promise = gst_promise_new_with_change_func(offer_promise_changed, cgw_callback_new((void *)done, ctx, release), cgw_callback_free);
    g_signal_emit_by_name(webrtc, "create-offer", NULL, promise);
    gst_promise_unref(promise);
}

void cgw_webrtc_create_answer(CgwElement *webrtc, cgw_sdp_result_fn done, void *ctx, cgw_release_fn release) {
    GstPromise *promise = gst_promise_new_with_change_func(answer_promise_changed, cgw_callback_new((void *)done, ctx, release), cgw_callback_free);
    g_signal_emit_by_name(webrtc, "create-answer", NULL, promise);
    gst_promise_unref(promise);
}

static void done_promise_changed(GstPromise *promise, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    GstPromiseResult result = gst_promise_wait(promise);
    gchar *error = promise_error_text(promise, result);
    ((cgw_done_fn)cb->fn)(cb->ctx, error);
    g_free(error);
}

static bool set_description(CgwElement *webrtc, const char *signal, int sdp_type, const char *sdp,
                            cgw_done_fn done, void *ctx, cgw_release_fn release) {
    GstSDPMessage *message = NULL;
    if (gst_sdp_message_new(&message) != GST_SDP_OK) return false;
    if (gst_sdp_message_parse_buffer((const guint8 *)sdp, (guint)strlen(sdp), message) != GST_SDP_OK ||
        gst_sdp_message_medias_len(message) == 0) {
        gst_sdp_message_free(message);
        return false;
    }
    GstWebRTCSessionDescription *desc = gst_webrtc_session_description_new(
        sdp_type == CGW_SDP_OFFER ? GST_WEBRTC_SDP_TYPE_OFFER : GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = gst_promise_new_with_change_func(done_promise_changed, cgw_callback_new((void *)done, ctx, release), cgw_callback_free);
    g_signal_emit_by_name(webrtc, signal, desc, promise);
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(desc);
    return true;
}

bool cgw_webrtc_set_local_description(CgwElement *webrtc, int sdp_type, const char *sdp, cgw_done_fn done,
                                      void *ctx, cgw_release_fn release) {
    return set_description(webrtc, "set-local-description", sdp_type, sdp, done, ctx, release);
}

bool cgw_webrtc_set_remote_description(CgwElement *webrtc, int sdp_type, const char *sdp, cgw_done_fn done,
                                       void *ctx, cgw_release_fn release) {
    return set_description(webrtc, "set-remote-description", sdp_type, sdp, done, ctx, release);
}

void cgw_webrtc_add_ice_candidate(CgwElement *webrtc, unsigned sdp_mline_index, const char *candidate) {
    g_signal_emit_by_name(webrtc, "add-ice-candidate", sdp_mline_index, candidate);
}

static GstWebRTCRTPTransceiverDirection direction_from_int(int direction) {
    switch (direction) {
    case CGW_DIRECTION_INACTIVE: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_INACTIVE;
    case CGW_DIRECTION_SENDONLY: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY;
    case CGW_DIRECTION_RECVONLY: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_RECVONLY;
    default: return GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDRECV;
    }
}

bool cgw_webrtc_add_transceiver(CgwElement *webrtc, int direction, const char *caps) {
    GstCaps *parsed = gst_caps_from_string(caps);
    if (parsed == NULL) return false;
    GstWebRTCRTPTransceiver *transceiver = NULL;
    g_signal_emit_by_name(webrtc, "add-transceiver", direction_from_int(direction), parsed, &transceiver);
    gst_caps_unref(parsed);
    if (transceiver == NULL) return false;
    gst_object_unref(transceiver);
    return true;
}

static GstWebRTCRTPTransceiver *transceiver_at(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = NULL;
    if (index < 0) return NULL;
    g_signal_emit_by_name(webrtc, "get-transceiver", index, &transceiver);
    return transceiver;
}

int cgw_webrtc_transceiver_count(CgwElement *webrtc) {
    GArray *transceivers = NULL;
    g_signal_emit_by_name(webrtc, "get-transceivers", &transceivers);
    if (transceivers == NULL) return 0;
    int count = (int)transceivers->len;
    g_array_unref(transceivers);
    return count;
}

bool cgw_webrtc_set_transceiver_direction(CgwElement *webrtc, int index, int direction) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return false;
    g_object_set(transceiver, "direction", direction_from_int(direction), NULL);
    gst_object_unref(transceiver);
    return true;
}

bool cgw_webrtc_set_transceiver_codec_preferences(CgwElement *webrtc, int index, const char *caps) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return false;
    GstCaps *parsed = gst_caps_from_string(caps);
    if (parsed == NULL) {
        gst_object_unref(transceiver);
        return false;
    }
    g_object_set(transceiver, "codec-preferences", parsed, NULL);
    gst_caps_unref(parsed);
    gst_object_unref(transceiver);
    return true;
}

int cgw_webrtc_transceiver_kind(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return 0;
    GstWebRTCKind kind = GST_WEBRTC_KIND_UNKNOWN;
    g_object_get(transceiver, "kind", &kind, NULL);
    gst_object_unref(transceiver);
    return kind == GST_WEBRTC_KIND_AUDIO ? 1 : kind == GST_WEBRTC_KIND_VIDEO ? 2 : 0;
}

int cgw_webrtc_transceiver_mline(CgwElement *webrtc, int index) {
    GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, index);
    if (transceiver == NULL) return -1;
    guint mline = G_MAXUINT;
    g_object_get(transceiver, "mlineindex", &mline, NULL);
    gst_object_unref(transceiver);
    return mline == G_MAXUINT ? -1 : (int)mline;
}

bool cgw_webrtc_add_turn_server(CgwElement *webrtc, const char *uri) {
    gboolean ok = FALSE;
    g_signal_emit_by_name(webrtc, "add-turn-server", uri, &ok);
    return ok;
}

/* webrtcbin's libnice agent, referenced (NULL: another ICE implementation). */
static NiceAgent *nice_agent_of(CgwElement *webrtc) {
    GObject *ice = NULL;
    GObject *agent = NULL;
    if (cgw_find_property(webrtc, "ice-agent") == NULL) return NULL;
    g_object_get(webrtc, "ice-agent", &ice, NULL);
    if (ice != NULL && cgw_find_property(ice, "agent") != NULL) g_object_get(ice, "agent", &agent, NULL);
    if (ice != NULL) g_object_unref(ice);
    if (agent != NULL && !NICE_IS_AGENT(agent)) {
        g_object_unref(agent);
        return NULL;
    }
    return agent != NULL ? NICE_AGENT(agent) : NULL;
}

bool cgw_webrtc_add_local_address(CgwElement *webrtc, const char *address) {
    NiceAgent *agent = nice_agent_of(webrtc);
    bool ok = false;
    if (agent != NULL) {
        NiceAddress nice_address;
        nice_address_init(&nice_address);
        if (nice_address_set_from_string(&nice_address, address)) {
            ok = nice_agent_add_local_address(agent, &nice_address);
        }
        g_object_unref(agent);
    }
    return ok;
}

bool cgw_webrtc_tune_ice_agent(CgwElement *webrtc, unsigned pacing_ms, bool upnp) {
    NiceAgent *agent = nice_agent_of(webrtc);
    if (agent == NULL) return false;
    bool ok = cgw_find_property(agent, "stun-pacing-timer") != NULL && cgw_find_property(agent, "upnp") != NULL;
    if (ok) g_object_set(agent, "stun-pacing-timer", (guint)pacing_ms, "upnp", (gboolean)upnp, NULL);
    g_object_unref(agent);
    return ok;
}

bool cgw_webrtc_nominate_aggressively(CgwElement *webrtc) {
    NiceAgent *agent = nice_agent_of(webrtc);
    if (agent == NULL) return false;
    GParamSpec *spec = cgw_find_property(agent, "nomination-mode");
    bool ok = false;
    if (spec != NULL && G_IS_PARAM_SPEC_ENUM(spec)) {
        /* nomination-mode is construct-only and GstWebRTCNice (1.22) makes its agent itself with
         * regular nomination, so g_object_set refuses it: the class's own setter writes the mode.
         * libnice reads it each time it sends a check, so set before any check it holds for all. */
        GObjectClass *owner = g_type_class_peek(spec->owner_type);
        if (owner != NULL && owner->set_property != NULL) {
            GValue value = G_VALUE_INIT;
            g_value_init(&value, spec->value_type);
            g_value_set_enum(&value, NICE_NOMINATION_MODE_AGGRESSIVE);
            owner->set_property(G_OBJECT(agent), spec->param_id, &value, spec);
            g_value_unset(&value);
        }
        ok = cgw_webrtc_nominates_aggressively(webrtc);
    }
    g_object_unref(agent);
    return ok;
}

bool cgw_webrtc_nominates_aggressively(CgwElement *webrtc) {
    NiceAgent *agent = nice_agent_of(webrtc);
    if (agent == NULL) return false;
    NiceNominationMode mode = NICE_NOMINATION_MODE_REGULAR;
    if (cgw_find_property(agent, "nomination-mode") != NULL) g_object_get(agent, "nomination-mode", &mode, NULL);
    g_object_unref(agent);
    return mode == NICE_NOMINATION_MODE_AGGRESSIVE;
}

bool cgw_webrtc_set_ice_protocols(CgwElement *webrtc, bool udp, bool tcp) {
    GObject *ice = NULL;
    if (cgw_find_property(webrtc, "ice-agent") == NULL) return false;
    g_object_get(webrtc, "ice-agent", &ice, NULL);
    bool ok = ice != NULL && cgw_find_property(ice, "ice-tcp") != NULL && cgw_find_property(ice, "ice-udp") != NULL;
    if (ok) g_object_set(ice, "ice-udp", (gboolean)udp, "ice-tcp", (gboolean)tcp, NULL);
    if (ice != NULL) g_object_unref(ice);
    return ok;
}

bool cgw_webrtc_set_ice_transport_policy(CgwElement *webrtc, int policy) {
    GParamSpec *spec = cgw_find_property(webrtc, "ice-transport-policy");
    if (spec == NULL || !G_TYPE_IS_ENUM(spec->value_type)) return false;
    g_object_set(webrtc, "ice-transport-policy", (GstWebRTCICETransportPolicy)policy, NULL);
    GstWebRTCICETransportPolicy now = GST_WEBRTC_ICE_TRANSPORT_POLICY_ALL;
    g_object_get(webrtc, "ice-transport-policy", &now, NULL);
    return (int)now == policy;
}

static void copy_candidate(const NiceCandidate *candidate, CgwCandidateInfo *out) {
    char text[NICE_ADDRESS_STRING_LEN];
    nice_address_to_string(&candidate->addr, text);
    out->type = (int)candidate->type;
    g_strlcpy(out->address, text, sizeof out->address);
    out->port = nice_address_get_port(&candidate->addr);
}

bool cgw_webrtc_selected_pair(CgwElement *webrtc, CgwCandidateInfo *local, CgwCandidateInfo *remote) {
    NiceAgent *agent = nice_agent_of(webrtc);
    if (agent == NULL) return false;
    bool found = false;
    /* webrtcbin adds one libnice stream per transport, numbered from 1 (one with max-bundle). */
    for (guint stream_id = 1; stream_id <= 16 && !found; stream_id++) {
        NiceCandidate *l = NULL, *r = NULL;
        if (nice_agent_get_selected_pair(agent, stream_id, 1, &l, &r) && l != NULL && r != NULL) {
            copy_candidate(l, local);
            copy_candidate(r, remote);
            found = true;
        }
    }
    g_object_unref(agent);
    return found;
}

int cgw_webrtc_set_rtcp_interval(CgwElement *webrtc, unsigned interval_ms) {
    GstElement *rtpbin = cgw_bin_get_child(webrtc, "rtpbin");
    int changed = 0;
    if (rtpbin == NULL) return 0;
    for (guint session_id = 0; session_id < 4; session_id++) {
        GObject *session = NULL;
        g_signal_emit_by_name(rtpbin, "get-internal-session", session_id, &session);
        if (session == NULL) continue;
        if (cgw_find_property(session, "rtcp-min-interval") != NULL) {
            g_object_set(session, "rtcp-min-interval", (guint64)interval_ms * GST_MSECOND, NULL);
            changed++;
        }
        g_object_unref(session);
    }
    gst_object_unref(rtpbin);
    return changed;
}

/* The signal's data: the packet count shifted left by one, and whether to start after the events. */
static void on_new_jitterbuffer(GstElement *rtpbin, GstElement *jitterbuffer, guint session, guint ssrc, gpointer data) {
    (void)rtpbin;
    (void)session;
    (void)ssrc;
    guint packed = GPOINTER_TO_UINT(data);
    if (cgw_find_property(jitterbuffer, "faststart-min-packets") != NULL) {
        g_object_set(jitterbuffer, "faststart-min-packets", packed >> 1, NULL);
        /* Without it the fast start is missed whenever a whole first frame arrives before the
         * buffer's thread has pushed its start events (cgw_jitterbuffer_start.c). */
        if (packed & 1) (void)cgw_jitterbuffer_start_after_queued_events((CgwElement *)jitterbuffer);
    }
}

bool cgw_webrtc_set_jitterbuffer_fast_start(CgwElement *webrtc, unsigned packets, bool after_queued_events) {
    /* webrtcbin's rtpbin has loaded the rtpmanager plugin, so the type is registered. */
    GType type = g_type_from_name("GstRtpJitterBuffer");
    if (type == 0) return false;
    GObjectClass *klass = g_type_class_ref(type);
    bool has = g_object_class_find_property(klass, "faststart-min-packets") != NULL;
    g_type_class_unref(klass);
    if (!has) return false;
    GstElement *rtpbin = cgw_bin_get_child(webrtc, "rtpbin");
    if (rtpbin == NULL) return false;
    guint packed = (MIN(packets, G_MAXUINT >> 1) << 1) | (after_queued_events ? 1u : 0u);
    g_signal_connect(rtpbin, "new-jitterbuffer", G_CALLBACK(on_new_jitterbuffer), GUINT_TO_POINTER(packed));
    gst_object_unref(rtpbin);
    return true;
}

/* ------------------------------------------------------------------------------------------------
 * Connected signals
 * ---------------------------------------------------------------------------------------------- */

static void on_ice_candidate_trampoline(GstElement *webrtc, guint mline, gchar *candidate, gpointer data) {
    (void)webrtc;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    ((cgw_ice_candidate_fn)cb->fn)(cb->ctx, mline, candidate != NULL ? candidate : "");
}

unsigned long cgw_connect_ice_candidate(CgwElement *webrtc, cgw_ice_candidate_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(webrtc, "on-ice-candidate", G_CALLBACK(on_ice_candidate_trampoline),
                                 cgw_callback_new((void *)fn, ctx, release), cgw_callback_free_closure, 0);
}

static void on_notify_trampoline(GstElement *webrtc, gpointer data) {
    (void)webrtc;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    ((cgw_notify_fn)cb->fn)(cb->ctx);
}

unsigned long cgw_connect_negotiation_needed(CgwElement *webrtc, cgw_notify_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(webrtc, "on-negotiation-needed", G_CALLBACK(on_notify_trampoline),
                                 cgw_callback_new((void *)fn, ctx, release), cgw_callback_free_closure, 0);
}

static void on_property_state_trampoline(GObject *object, GParamSpec *spec, gpointer data) {
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    int64_t value = -1;
    if (!cgw_object_get_integer(object, spec->name, &value)) value = -1;
    ((cgw_state_fn)cb->fn)(cb->ctx, (int)value);
}

static unsigned long connect_notify(CgwElement *element, const char *signal, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(element, signal, G_CALLBACK(on_property_state_trampoline),
                                 cgw_callback_new((void *)fn, ctx, release), cgw_callback_free_closure, 0);
}

unsigned long cgw_connect_ice_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::ice-connection-state", fn, ctx, release);
}

unsigned long cgw_connect_connection_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::connection-state", fn, ctx, release);
}

unsigned long cgw_connect_ice_gathering_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release) {
    return connect_notify(webrtc, "notify::ice-gathering-state", fn, ctx, release);
}

static void on_pad_added_trampoline(GstElement *element, GstPad *pad, gpointer data) {
    (void)element;
    CgwCallback *cb = data;
    MARK_CALLBACK_THREAD();
    if (GST_PAD_DIRECTION(pad) != GST_PAD_SRC) return;
    GstCaps *caps = gst_pad_get_current_caps(pad);
    if (caps == NULL) caps = gst_pad_query_caps(pad, NULL);
    const char *media = "";
    const char *encoding = "";
    if (caps != NULL && gst_caps_get_size(caps) > 0) {
        GstStructure *s = gst_caps_get_structure(caps, 0);
        const char *m = gst_structure_get_string(s, "media");
        const char *e = gst_structure_get_string(s, "encoding-name");
        if (m != NULL) media = m;
        if (e != NULL) encoding = e;
    }
    ((cgw_pad_added_fn)cb->fn)(cb->ctx, pad, media, encoding);
    if (caps != NULL) gst_caps_unref(caps);
}

unsigned long cgw_connect_pad_added(CgwElement *element, cgw_pad_added_fn fn, void *ctx, cgw_release_fn release) {
    return g_signal_connect_data(element, "pad-added", G_CALLBACK(on_pad_added_trampoline),
                                 cgw_callback_new((void *)fn, ctx, release), cgw_callback_free_closure, 0);
}

unsigned long cgw_connect_dtls_transport_state(CgwElement *webrtc, cgw_state_fn fn, void *ctx, cgw_release_fn release,
                                               void **transport_out) {
    *transport_out = NULL;
    int count = cgw_webrtc_transceiver_count(webrtc);
    for (int i = 0; i < count; i++) {
        GstWebRTCRTPTransceiver *transceiver = transceiver_at(webrtc, i);
        if (transceiver == NULL) continue;
        GstWebRTCRTPSender *sender = NULL;
        GstWebRTCRTPReceiver *receiver = NULL;
        GstWebRTCDTLSTransport *transport = NULL;
        g_object_get(transceiver, "sender", &sender, "receiver", &receiver, NULL);
        if (sender != NULL) g_object_get(sender, "transport", &transport, NULL);
        if (transport == NULL && receiver != NULL) g_object_get(receiver, "transport", &transport, NULL);
        if (sender != NULL) gst_object_unref(sender);
        if (receiver != NULL) gst_object_unref(receiver);
        gst_object_unref(transceiver);
        if (transport != NULL) {
            *transport_out = transport; /* the caller's reference: cgw_object_unref */
            return connect_notify((CgwElement *)transport, "notify::state", fn, ctx, release);
        }
    }
    if (release != NULL) release(ctx);
    return 0;
}

void *cgw_object_ref(void *object) { return object != NULL ? g_object_ref(object) : NULL; }

void cgw_object_unref(void *object) {
    if (object != NULL) g_object_unref(object);
}

void cgw_signal_disconnect(void *object, unsigned long handler_id) {
    if (object != NULL && handler_id != 0 && g_signal_handler_is_connected(object, handler_id)) {
        g_signal_handler_disconnect(object, handler_id);
    }
}
