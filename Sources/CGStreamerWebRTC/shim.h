/* GStreamer's WebRTC library (pkg-config gstreamer-webrtc-1.0): its cflags and libs reach CGstWebRTC. */
#include <gst/webrtc/webrtc.h>
