/* GStreamer's SDP library (pkg-config gstreamer-sdp-1.0): its cflags and libs reach CGstWebRTC. */
#include <gst/sdp/sdp.h>
