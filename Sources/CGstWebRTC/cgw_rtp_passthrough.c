/* The app's counted links (`bench media`'s streams beyond the decoded sample) without jitter
 * buffers: rtpbin asks for one per received SSRC ("request-jitterbuffer"), and a counted link
 * answers with this element, which passes each packet on in the thread that brought it. An
 * rtpjitterbuffer holds packets for its latency and pushes them from a task of its own, with a
 * second thread for its timers: two threads and a hand-off per packet, per stream, which a receiver
 * that only counts does not need (on loopback packets do not reorder, and the counter reports a
 * sequence gap or a late packet as such instead of hiding it).
 *
 * The properties rtpbin and webrtcbin set on a jitter buffer without asking whether it has them
 * ("latency", "do-retransmission") exist here and do nothing; "stats" counts what was passed. */
#include "cgw_internal.h"

typedef struct {
    GstElement parent;
    GstPad *sink;
    GstPad *src;
    guint latency;
    gboolean do_retransmission;
    guint64 pushed; /* __atomic */
} CgwRtpPass;

typedef struct {
    GstElementClass parent_class;
} CgwRtpPassClass;

G_DEFINE_TYPE(CgwRtpPass, cgw_rtp_pass, GST_TYPE_ELEMENT)

enum { PROP_0, PROP_LATENCY, PROP_DO_RETRANSMISSION, PROP_STATS };

static GstStaticPadTemplate pass_sink_template =
    GST_STATIC_PAD_TEMPLATE("sink", GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS("application/x-rtp"));
static GstStaticPadTemplate pass_src_template =
    GST_STATIC_PAD_TEMPLATE("src", GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS("application/x-rtp"));

static GstFlowReturn pass_chain(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    (void)pad;
    CgwRtpPass *self = (CgwRtpPass *)parent;
    __atomic_fetch_add(&self->pushed, 1, __ATOMIC_RELAXED);
    return gst_pad_push(self->src, buffer);
}

static GstFlowReturn pass_chain_list(GstPad *pad, GstObject *parent, GstBufferList *list) {
    (void)pad;
    CgwRtpPass *self = (CgwRtpPass *)parent;
    __atomic_fetch_add(&self->pushed, gst_buffer_list_length(list), __ATOMIC_RELAXED);
    return gst_pad_push_list(self->src, list);
}

static void pass_set_property(GObject *object, guint id, const GValue *value, GParamSpec *spec) {
    CgwRtpPass *self = (CgwRtpPass *)object;
    switch (id) {
    case PROP_LATENCY: self->latency = g_value_get_uint(value); break;
    case PROP_DO_RETRANSMISSION: self->do_retransmission = g_value_get_boolean(value); break;
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec); break;
    }
}

static void pass_get_property(GObject *object, guint id, GValue *value, GParamSpec *spec) {
    CgwRtpPass *self = (CgwRtpPass *)object;
    switch (id) {
    case PROP_LATENCY: g_value_set_uint(value, self->latency); break;
    case PROP_DO_RETRANSMISSION: g_value_set_boolean(value, self->do_retransmission); break;
    case PROP_STATS: {
        guint64 pushed = __atomic_load_n(&self->pushed, __ATOMIC_RELAXED);
        g_value_take_boxed(value, gst_structure_new("application/x-rtp-jitterbuffer-stats", "num-pushed",
                                                    G_TYPE_UINT64, pushed, "num-lost", G_TYPE_UINT64, (guint64)0, NULL));
        break;
    }
    default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, spec); break;
    }
}

static void cgw_rtp_pass_class_init(CgwRtpPassClass *klass) {
    GObjectClass *object_class = G_OBJECT_CLASS(klass);
    GstElementClass *element_class = GST_ELEMENT_CLASS(klass);
    object_class->set_property = pass_set_property;
    object_class->get_property = pass_get_property;
    g_object_class_install_property(object_class, PROP_LATENCY,
        g_param_spec_uint("latency", "Latency", "Ignored: packets are passed on at once", 0, G_MAXUINT, 0,
                          G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object_class, PROP_DO_RETRANSMISSION,
        g_param_spec_boolean("do-retransmission", "Retransmission", "Ignored: nothing is asked again", FALSE,
                             G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS));
    g_object_class_install_property(object_class, PROP_STATS,
        g_param_spec_boxed("stats", "Statistics", "Packets passed on", GST_TYPE_STRUCTURE,
                           G_PARAM_READABLE | G_PARAM_STATIC_STRINGS));
    gst_element_class_add_static_pad_template(element_class, &pass_sink_template);
    gst_element_class_add_static_pad_template(element_class, &pass_src_template);
    gst_element_class_set_static_metadata(element_class, "RTP pass-through", "Filter/Network/RTP",
                                          "Passes RTP on in the caller's thread (a counted link's jitter buffer)",
                                          "ipcemu");
}

static void cgw_rtp_pass_init(CgwRtpPass *self) {
    self->sink = gst_pad_new_from_static_template(&pass_sink_template, "sink");
    gst_pad_set_chain_function(self->sink, pass_chain);
    gst_pad_set_chain_list_function(self->sink, pass_chain_list);
    GST_PAD_SET_PROXY_CAPS(self->sink);
    GST_PAD_SET_PROXY_ALLOCATION(self->sink);
    GST_PAD_SET_PROXY_SCHEDULING(self->sink);
    gst_element_add_pad(GST_ELEMENT(self), self->sink);
    self->src = gst_pad_new_from_static_template(&pass_src_template, "src");
    GST_PAD_SET_PROXY_CAPS(self->src);
    GST_PAD_SET_PROXY_ALLOCATION(self->src);
    GST_PAD_SET_PROXY_SCHEDULING(self->src);
    gst_element_add_pad(GST_ELEMENT(self), self->src);
}

static GstElement *request_pass_through(GstElement *rtpbin, guint session, gpointer data) {
    (void)rtpbin;
    (void)session;
    (void)data;
    return GST_ELEMENT(g_object_new(cgw_rtp_pass_get_type(), NULL));
}

bool cgw_webrtc_receive_without_jitterbuffers(CgwElement *webrtc) {
    GstElement *rtpbin = cgw_bin_get_child(webrtc, "rtpbin");
    if (rtpbin == NULL) return false;
    bool connected = g_signal_lookup("request-jitterbuffer", G_OBJECT_TYPE(rtpbin)) != 0
        && g_signal_connect(rtpbin, "request-jitterbuffer", G_CALLBACK(request_pass_through), NULL) != 0;
    gst_object_unref(rtpbin);
    return connected;
}
