#ifndef IPCEMU_CCURL_SHIM_H
#define IPCEMU_CCURL_SHIM_H
/* The system's libcurl (libcurl4-openssl-dev; libcurl4 at run time, TLS through the system's
 * OpenSSL). Only CHTTPTransfer's C file uses it; Swift sees CHTTPTransfer's header. */
#include <curl/curl.h>
#endif
