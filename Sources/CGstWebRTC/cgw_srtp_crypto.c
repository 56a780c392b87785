/* SRTP's crypto, prepared for many links in one process.
 *
 * Debian's libsrtp2 does its AES and HMAC through NSS, and each cipher it makes initialises NSS
 * with NSS_INIT_OPTIMIZESPACE: the first such call makes NSS's software token with 32-bucket
 * tables for its PKCS#11 sessions. Every SRTP context holds sessions, and every packet opens and
 * closes one (libsrtp makes its AES-CTR context per packet) and looks its others up, so with a few
 * hundred links each packet walked chains of about a hundred sessions: with 200 receiving links
 * this was a quarter of the app side's CPU (perf: libsoftokn3). Initialising NSS first, with the
 * same flags but without OPTIMIZESPACE, makes the tables 1,024 buckets; libsrtp's own
 * NSS_InitContext calls then only add contexts to it. NSS is looked up at run time: where libsrtp
 * uses OpenSSL or its own crypto and NSS is absent, nothing is done. */
#include "cgw_internal.h"

#include <dlfcn.h>
#include <pthread.h>

/* nss.h's flags: READONLY | NOCERTDB | NOMODDB | FORCEOPEN, what libsrtp passes minus OPTIMIZESPACE. */
#define CGW_NSS_FLAGS (0x1u | 0x2u | 0x4u | 0x8u)

typedef void *(*nss_init_context_fn)(const char *configdir, const char *cert_prefix, const char *key_prefix,
                                     const char *secmod_name, void *init_params, unsigned int flags);

static pthread_once_t prepare_once = PTHREAD_ONCE_INIT;
static bool prepared = false;

static void prepare(void) {
    void *nss = dlopen("libnss3.so", RTLD_NOW | RTLD_GLOBAL);
    if (nss == NULL) return;
    nss_init_context_fn init = (nss_init_context_fn)dlsym(nss, "NSS_InitContext");
    /* The context is kept for the life of the process (and the library with it). */
    prepared = init != NULL && init("", "", "", "", NULL, CGW_NSS_FLAGS) != NULL;
}

bool cgw_prepare_srtp_crypto(void) {
    pthread_once(&prepare_once, prepare);
    return prepared;
}
