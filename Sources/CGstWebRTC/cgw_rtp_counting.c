/* Counting received H.264 access units at the RTP level (the app simulator's counted links in
 * `bench media`): no depayloader, no queue, no thread of its own. An access unit ends at the
 * packet with the RTP marker bit (RFC 6184 5.1: set on the last packet of an access unit); it is a
 * key frame when one of its packets carries an IDR slice (NAL type 5), directly, in a STAP-A or as
 * the first fragment of an FU-A. Each access unit also reports the packets its RTP sequence
 * numbers show missing or late since the one before: a counted stream that lost packets says so
 * (there is no jitter buffer before it to reorder them: cgw_rtp_passthrough.c). */
#include "cgw_internal.h"

int cgw_rtp_h264_packet_kind(const uint8_t *packet, size_t length, bool *carries_idr) {
    if (carries_idr != NULL) *carries_idr = false;
    if (packet == NULL || length < 12 || (packet[0] >> 6) != 2) return -1;
    size_t offset = 12 + 4 * (size_t)(packet[0] & 0x0f);
    if (packet[0] & 0x10) { /* header extension: 4 bytes, then its length in 32-bit words */
        if (length < offset + 4) return -1;
        offset += 4 + 4 * (((size_t)packet[offset + 2] << 8) | packet[offset + 3]);
    }
    size_t end = length;
    if (packet[0] & 0x20) { /* padding: its count is the last byte */
        size_t padding = packet[length - 1];
        if (padding > length) return -1;
        end = length - padding;
    }
    if (end <= offset) return -1;
    const uint8_t *payload = packet + offset;
    size_t size = end - offset;
    bool idr = false;
    switch (payload[0] & 0x1f) {
    case 24: /* STAP-A: 16-bit sizes, each followed by a NAL unit */
        for (size_t at = 1; at + 2 < size;) {
            size_t nal = ((size_t)payload[at] << 8) | payload[at + 1];
            if (nal == 0 || at + 2 + nal > size) break;
            if ((payload[at + 2] & 0x1f) == 5) idr = true;
            at += 2 + nal;
        }
        break;
    case 28: /* FU-A: the fragmented unit's type in the FU header; the start fragment counts */
        if (size >= 2 && (payload[1] & 0x80) && (payload[1] & 0x1f) == 5) idr = true;
        break;
    case 5:
        idr = true;
        break;
    default:
        break;
    }
    if (carries_idr != NULL) *carries_idr = idr;
    return (packet[1] & 0x80) ? 1 : 0;
}

typedef struct {
    CgwCallback *callback;
    bool idr; /* the access unit so far carries an IDR slice */
    bool have_sequence;
    uint16_t next_sequence; /* the RTP sequence number expected next */
    unsigned missing;      /* packets skipped over by the sequence numbers, since the last report */
    unsigned late;         /* packets older than one already seen (reordered or repeated), since then */
    bool have_timestamp;
    uint32_t last_timestamp; /* RTP timestamp of the last access unit's end */
} AccessUnitCounter;

static void access_unit_counter_free(gpointer data) {
    AccessUnitCounter *counter = data;
    cgw_callback_free(counter->callback);
    g_free(counter);
}

/* The RTP sequence check: a packet after the one expected skips over (and counts as missing) the
 * ones between; one before it (within half the sequence space) is late: reordered or repeated. */
void cgw_rtp_sequence_step(bool *have, uint16_t *next, uint16_t sequence, unsigned *missing, unsigned *late) {
    if (!*have) {
        *have = true;
        *next = (uint16_t)(sequence + 1);
        return;
    }
    uint16_t ahead = (uint16_t)(sequence - *next);
    if (ahead < 0x8000) {
        *missing += ahead;
        *next = (uint16_t)(sequence + 1);
    } else {
        *late += 1;
    }
}

static void count_packet(AccessUnitCounter *counter, GstBuffer *buffer) {
    GstMapInfo map;
    if (!gst_buffer_map(buffer, &map, GST_MAP_READ)) return;
    bool idr = false;
    int kind = cgw_rtp_h264_packet_kind(map.data, map.size, &idr);
    uint16_t sequence = kind >= 0 ? (uint16_t)((map.data[2] << 8) | map.data[3]) : 0;
    uint32_t timestamp = kind >= 0
        ? ((uint32_t)map.data[4] << 24) | ((uint32_t)map.data[5] << 16) | ((uint32_t)map.data[6] << 8) | map.data[7]
        : 0;
    gst_buffer_unmap(buffer, &map);
    if (kind < 0) return;
    cgw_rtp_sequence_step(&counter->have_sequence, &counter->next_sequence, sequence, &counter->missing,
                          &counter->late);
    counter->idr = counter->idr || idr;
    if (kind == 1) {
        /* How far the RTP clock moved since the last access unit (90 kHz for H.264): frames the
         * sender skipped show as a longer step. Backwards (a late marker) counts nothing. */
        uint32_t advance = counter->have_timestamp ? timestamp - counter->last_timestamp : 0;
        if (advance >= 0x80000000u) advance = 0;
        else counter->last_timestamp = timestamp;
        if (!counter->have_timestamp) {
            counter->have_timestamp = true;
            counter->last_timestamp = timestamp;
        }
        ((cgw_access_unit_fn)counter->callback->fn)(counter->callback->ctx, counter->idr, counter->missing,
                                                    counter->late, advance);
        counter->idr = false;
        counter->missing = 0;
        counter->late = 0;
    }
}

static GstPadProbeReturn count_access_units_probe(GstPad *pad, GstPadProbeInfo *info, gpointer data) {
    (void)pad;
    MARK_CALLBACK_THREAD();
    AccessUnitCounter *counter = data;
    if (info->type & GST_PAD_PROBE_TYPE_BUFFER) {
        count_packet(counter, GST_PAD_PROBE_INFO_BUFFER(info));
    } else if (info->type & GST_PAD_PROBE_TYPE_BUFFER_LIST) {
        GstBufferList *list = GST_PAD_PROBE_INFO_BUFFER_LIST(info);
        guint n = gst_buffer_list_length(list);
        for (guint i = 0; i < n; i++) count_packet(counter, gst_buffer_list_get(list, i));
    }
    return GST_PAD_PROBE_OK;
}

bool cgw_sink_count_rtp_access_units(CgwElement *sink, cgw_access_unit_fn fn, void *ctx, cgw_release_fn release) {
    if (sink == NULL) return false;
    GstPad *pad = gst_element_get_static_pad(sink, "sink");
    if (pad == NULL) return false;
    AccessUnitCounter *counter = g_new0(AccessUnitCounter, 1);
    counter->callback = cgw_callback_new((void *)fn, ctx, release);
    gulong id = gst_pad_add_probe(pad, GST_PAD_PROBE_TYPE_BUFFER | GST_PAD_PROBE_TYPE_BUFFER_LIST,
                                  count_access_units_probe, counter, access_unit_counter_free);
    gst_object_unref(pad);
    return id != 0;
}
