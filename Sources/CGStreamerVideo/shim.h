/* GStreamer's video library (pkg-config gstreamer-video-1.0): its cflags and libs reach CGstWebRTC. */
#include <gst/video/video.h>
