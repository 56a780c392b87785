// libqrencode (Debian libqrencode-dev), for the pairing QR code in the terminal (PROTOCOL.md 9.2).
#include <qrencode.h>
