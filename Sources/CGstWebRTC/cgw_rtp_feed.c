/* One payloader per feed (issue 24 item 5): what an SFU does.
 *
 * A shared encoder's access units are made into RTP packets once, by one rtph264pay of the feed
 * (cgw_h264_packetize), and every link sends copies of those packets: a copy has a 12-byte header
 * of its own (the link's SSRC and payload type, its own continuous sequence numbers, the feed's
 * timestamps moved by the link's offset) and shares the payload's memory with the feed's packet
 * (cgw_rtp_pusher_push). The link's pushed pad is linked straight to webrtcbin's sink pad, so a
 * link no longer has a payloader or a capsfilter of its own, and the packets of one access unit go
 * down its send path as one buffer list.
 *
 * rtph264pay 1.22 makes each packet as a header buffer with the payload appended (the NAL units
 * of the input, as sub-buffers, FU-A's two bytes in the header's memory): the copy below does not
 * depend on that layout; it takes the header's bytes and shares whatever memory follows them. */
#include "cgw_internal.h"

/* ---- The feed's payloader ---- */

struct CgwH264Packetizer {
    GMutex lock;
    GstElement *pay;
    GstPad *in;  /* ours, linked to the payloader's sink */
    GstPad *out; /* ours, linked to its src: collects what it makes */
    GstBufferList *collected;
    gint64 started_us;
};

static GstFlowReturn collect_buffer(GstPad *pad, GstObject *parent, GstBuffer *buffer) {
    (void)parent;
    CgwH264Packetizer *p = gst_pad_get_element_private(pad);
    if (p->collected == NULL) p->collected = gst_buffer_list_new();
    gst_buffer_list_add(p->collected, buffer);
    return GST_FLOW_OK;
}

static GstFlowReturn collect_list(GstPad *pad, GstObject *parent, GstBufferList *list) {
    guint n = gst_buffer_list_length(list);
    for (guint i = 0; i < n; i++) collect_buffer(pad, parent, gst_buffer_ref(gst_buffer_list_get(list, i)));
    gst_buffer_list_unref(list);
    return GST_FLOW_OK;
}


CgwH264Packetizer *cgw_h264_packetizer_new(char **error_out) {
    GstElement *pay = gst_element_factory_make("rtph264pay", NULL);
    if (pay == NULL) {
        cgw_set_error(error_out, "no rtph264pay");
        return NULL;
    }
    gst_object_ref_sink(pay);
    /* As each link's payloader had them: SPS/PPS before every IDR, one packet list per unit. */
    gst_util_set_object_arg(G_OBJECT(pay), "config-interval", "-1");
    gst_util_set_object_arg(G_OBJECT(pay), "aggregate-mode", "zero-latency");
    CgwH264Packetizer *p = g_new0(CgwH264Packetizer, 1);
    g_mutex_init(&p->lock);
    p->pay = pay;
    p->started_us = g_get_monotonic_time();
    p->in = gst_pad_new("in", GST_PAD_SRC);
    gst_object_ref_sink(p->in);
    /* Upstream events from the payloader (reconfigure, latency) end at our input. */
    gst_pad_set_event_function(p->in, cgw_drop_event);
    p->out = gst_pad_new("out", GST_PAD_SINK);
    gst_object_ref_sink(p->out);
    gst_pad_set_element_private(p->out, p);
    gst_pad_set_chain_function(p->out, collect_buffer);
    gst_pad_set_chain_list_function(p->out, collect_list);
    /* The payloader's own events (caps, segment) are not the links': each link has its own. */
    gst_pad_set_event_function(p->out, cgw_drop_event);
    GstPad *pay_sink = gst_element_get_static_pad(pay, "sink");
    GstPad *pay_src = gst_element_get_static_pad(pay, "src");
    bool linked = pay_sink != NULL && pay_src != NULL && gst_pad_link(p->in, pay_sink) == GST_PAD_LINK_OK &&
                  gst_pad_link(pay_src, p->out) == GST_PAD_LINK_OK;
    if (pay_sink != NULL) gst_object_unref(pay_sink);
    if (pay_src != NULL) gst_object_unref(pay_src);
    if (!linked || !gst_pad_set_active(p->out, TRUE) || !gst_pad_set_active(p->in, TRUE) ||
        gst_element_set_state(pay, GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
        cgw_h264_packetizer_free(p);
        cgw_set_error(error_out, "the feed's payloader could not be set up");
        return NULL;
    }
    gchar *stream_id = g_strdup_printf("feed-%p", (void *)p);
    gst_pad_push_event(p->in, gst_event_new_stream_start(stream_id));
    g_free(stream_id);
    GstCaps *caps = gst_caps_from_string("video/x-h264,stream-format=byte-stream,alignment=au");
    gst_pad_push_event(p->in, gst_event_new_caps(caps));
    gst_caps_unref(caps);
    GstSegment segment;
    gst_segment_init(&segment, GST_FORMAT_TIME);
    gst_pad_push_event(p->in, gst_event_new_segment(&segment));
    return p;
}

void cgw_h264_packetizer_free(CgwH264Packetizer *p) {
    if (p == NULL) return;
    gst_element_set_state(p->pay, GST_STATE_NULL);
    gst_pad_set_active(p->in, FALSE);
    gst_pad_set_active(p->out, FALSE);
    gst_object_unref(p->in);
    gst_object_unref(p->out);
    gst_object_unref(p->pay);
    if (p->collected != NULL) gst_buffer_list_unref(p->collected);
    g_mutex_clear(&p->lock);
    g_free(p);
}

CgwRtpPackets *cgw_h264_packetize(CgwH264Packetizer *p, const void *bytes, size_t length, bool delta_unit) {
    if (p == NULL || bytes == NULL || length == 0) return NULL;
    GstBuffer *buffer = gst_buffer_new_memdup(bytes, length);
    g_mutex_lock(&p->lock);
    /* The feed's own clock (microseconds since it started): the payloader makes the RTP
     * timestamps from it; each link moves them by its offset. */
    gint64 now_us = g_get_monotonic_time() - p->started_us;
    GST_BUFFER_PTS(buffer) = (GstClockTime)(now_us > 0 ? now_us : 0) * GST_USECOND;
    if (delta_unit) GST_BUFFER_FLAG_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    GstFlowReturn flow = gst_pad_push(p->in, buffer);
    GstBufferList *made = p->collected;
    p->collected = NULL;
    g_mutex_unlock(&p->lock);
    if (flow != GST_FLOW_OK || made == NULL || gst_buffer_list_length(made) == 0) {
        if (made != NULL) gst_buffer_list_unref(made);
        return NULL;
    }
    return (CgwRtpPackets *)made;
}

unsigned cgw_rtp_packets_count(CgwRtpPackets *packets) {
    return packets != NULL ? gst_buffer_list_length((GstBufferList *)packets) : 0;
}

void cgw_rtp_packets_unref(CgwRtpPackets *packets) {
    if (packets != NULL) gst_buffer_list_unref((GstBufferList *)packets);
}

/* ---- A link's copies ---- */

/* What a link writes into its copies' headers. Only its pushing thread touches it (a link's
 * pushes are serial). */
typedef struct {
    guint32 ssrc;
    guint8 payload_type;
    guint16 next_seq;
    guint32 ts_offset;
    guint32 last_ts;
    gint64 last_push_us;
    guint64 source;
    gboolean started;
} RtpRewrite;

static const char *rewrite_key = "cgw-rtp-rewrite";

CgwPad *cgw_rtp_pusher_attach(CgwElement *pipeline, const char *element_name, const char *caps_text,
                              uint32_t *ssrc_out, char **error_out) {
    if (pipeline == NULL || element_name == NULL || caps_text == NULL) {
        cgw_set_error(error_out, "no pipeline, element or caps");
        return NULL;
    }
    GstCaps *caps = gst_caps_from_string(caps_text);
    gint payload_type = -1;
    if (caps == NULL || gst_caps_get_size(caps) != 1 ||
        !gst_structure_get_int(gst_caps_get_structure(caps, 0), "payload", &payload_type) || payload_type < 0 ||
        payload_type > 127) {
        if (caps != NULL) gst_caps_unref(caps);
        cgw_set_error(error_out, "the pushed RTP caps need one structure with a payload type 0-127");
        return NULL;
    }
    /* The element only holds the place of the link's packets in the description (its request of
     * webrtcbin's sink pad, in order); it is taken out and our pad linked to that sink pad. */
    GstElement *stand_in = gst_bin_get_by_name(GST_BIN(pipeline), element_name);
    GstPad *stand_in_src = stand_in != NULL ? gst_element_get_static_pad(stand_in, "src") : NULL;
    GstPad *sink = stand_in_src != NULL ? gst_pad_get_peer(stand_in_src) : NULL;
    if (sink == NULL) {
        if (stand_in_src != NULL) gst_object_unref(stand_in_src);
        if (stand_in != NULL) gst_object_unref(stand_in);
        gst_caps_unref(caps);
        cgw_set_error(error_out, "the pushed RTP input's element is missing or not linked");
        return NULL;
    }
    gst_pad_unlink(stand_in_src, sink);
    gst_object_unref(stand_in_src);
    gst_element_set_state(stand_in, GST_STATE_NULL);
    GstObject *parent = gst_object_get_parent(GST_OBJECT(stand_in));
    if (parent != NULL) {
        gst_bin_remove(GST_BIN(parent), stand_in);
        gst_object_unref(parent);
    }
    gst_object_unref(stand_in);

    RtpRewrite *rewrite = g_new0(RtpRewrite, 1);
    rewrite->ssrc = g_random_int();
    rewrite->payload_type = (guint8)payload_type;
    rewrite->next_seq = (guint16)g_random_int_range(0, 0x10000);
    /* The SSRC in the caps: rtpfunnel routes a PLI's force-key-unit to the pad of that SSRC. */
    gst_caps_set_simple(caps, "ssrc", G_TYPE_UINT, rewrite->ssrc, NULL);
    GstPad *pad = cgw_pusher_link(sink, caps, error_out);
    gst_object_unref(sink);
    if (pad == NULL) {
        g_free(rewrite);
        return NULL;
    }
    g_object_set_data_full(G_OBJECT(pad), rewrite_key, rewrite, g_free);
    if (ssrc_out != NULL) *ssrc_out = rewrite->ssrc;
    return pad;
}

/* The RTP header's length (fixed part, CSRCs, extension), or 0 when `buffer` holds no RTP packet. */
static gsize header_length(GstBuffer *buffer, guint8 fixed[12]) {
    gsize size = gst_buffer_get_size(buffer);
    if (size < 12 || gst_buffer_extract(buffer, 0, fixed, 12) != 12 || (fixed[0] >> 6) != 2) return 0;
    gsize length = 12 + 4 * (gsize)(fixed[0] & 0x0f);
    if (fixed[0] & 0x10) {
        guint8 extension[4];
        if (gst_buffer_extract(buffer, length, extension, 4) != 4) return 0;
        length += 4 + 4 * (gsize)((extension[2] << 8) | extension[3]);
    }
    return length <= size ? length : 0;
}

/* The link's copy of one packet: a header of its own, the payload's memory shared. */
static GstBuffer *link_copy(RtpRewrite *r, GstBuffer *packet, gint64 pts_ns) {
    guint8 fixed[12];
    gsize length = header_length(packet, fixed);
    if (length == 0) return NULL;
    GstBuffer *copy = gst_buffer_new_allocate(NULL, length, NULL);
    if (copy == NULL) return NULL;
    GstMapInfo map;
    if (!gst_buffer_map(copy, &map, GST_MAP_WRITE)) {
        gst_buffer_unref(copy);
        return NULL;
    }
    gst_buffer_extract(packet, 0, map.data, length);
    guint32 timestamp = ((guint32)fixed[4] << 24) | ((guint32)fixed[5] << 16) | ((guint32)fixed[6] << 8) | fixed[7];
    /* Unsigned 16- and 32-bit arithmetic: the sequence number and the timestamp wrap. */
    timestamp += r->ts_offset;
    guint16 seq = r->next_seq++;
    map.data[1] = (guint8)((fixed[1] & 0x80) | r->payload_type);
    map.data[2] = (guint8)(seq >> 8);
    map.data[3] = (guint8)seq;
    map.data[4] = (guint8)(timestamp >> 24);
    map.data[5] = (guint8)(timestamp >> 16);
    map.data[6] = (guint8)(timestamp >> 8);
    map.data[7] = (guint8)timestamp;
    map.data[8] = (guint8)(r->ssrc >> 24);
    map.data[9] = (guint8)(r->ssrc >> 16);
    map.data[10] = (guint8)(r->ssrc >> 8);
    map.data[11] = (guint8)r->ssrc;
    gst_buffer_unmap(copy, &map);
    r->last_ts = timestamp;
    gsize size = gst_buffer_get_size(packet);
    if (size > length && gst_buffer_copy_into(copy, packet, GST_BUFFER_COPY_MEMORY, length, size - length) == FALSE) {
        gst_buffer_unref(copy);
        return NULL;
    }
    GST_BUFFER_PTS(copy) = pts_ns >= 0 ? (GstClockTime)pts_ns : GST_CLOCK_TIME_NONE;
    return copy;
}

/* A unit from another feed than the last one (a `resolution` switch), or the first: the link's
 * timestamps go on from its last one, advanced by the time since (90 kHz, at least 1, at most
 * 10 s), so they stay continuous. */
static void rebase_if_new_source(RtpRewrite *r, GstBuffer *first, guint64 source) {
    if (r->started && r->source == source) return;
    guint8 fixed[12];
    if (gst_buffer_extract(first, 0, fixed, 12) != 12) return;
    guint32 feed_ts = ((guint32)fixed[4] << 24) | ((guint32)fixed[5] << 16) | ((guint32)fixed[6] << 8) | fixed[7];
    gint64 now_us = g_get_monotonic_time();
    if (r->started) {
        gint64 elapsed_us = CLAMP(now_us - r->last_push_us, 0, 10 * G_USEC_PER_SEC);
        guint32 advance = (guint32)MAX(1, elapsed_us * 90 / 1000);
        r->ts_offset = (r->last_ts + advance) - feed_ts;
    } else {
        r->ts_offset = g_random_int();
        r->started = TRUE;
    }
    r->source = source;
}

bool cgw_rtp_pusher_push(CgwPad *pad, CgwRtpPackets *packets, uint64_t source, int64_t pts_ns) {
    if (pad == NULL || packets == NULL) return false;
    RtpRewrite *r = g_object_get_data(G_OBJECT(pad), rewrite_key);
    GstBufferList *feed = (GstBufferList *)packets;
    guint n = gst_buffer_list_length(feed);
    if (r == NULL || n == 0) return false;
    rebase_if_new_source(r, gst_buffer_list_get(feed, 0), source);
    GstBufferList *list = gst_buffer_list_new_sized(n);
    for (guint i = 0; i < n; i++) {
        GstBuffer *copy = link_copy(r, gst_buffer_list_get(feed, i), pts_ns);
        if (copy != NULL) gst_buffer_list_add(list, copy);
    }
    r->last_push_us = g_get_monotonic_time();
    if (gst_buffer_list_length(list) == 0) {
        gst_buffer_list_unref(list);
        return false;
    }
    return gst_pad_push_list(pad, list) == GST_FLOW_OK;
}
