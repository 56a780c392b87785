#ifndef IPCEMU_CLIBCRYPTO_SHIM_H
#define IPCEMU_CLIBCRYPTO_SHIM_H
/* The system's OpenSSL libcrypto (libssl-dev; libssl3 at run time, which GStreamer's DTLS and
 * libmosquitto already need). Only CWireCrypto's C file uses it; Swift sees CWireCrypto's header. */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#endif
