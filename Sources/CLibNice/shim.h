/* libnice, the ICE agent under webrtcbin (pkg-config nice): its cflags and libs reach CGstWebRTC. */
#include <nice/agent.h>
