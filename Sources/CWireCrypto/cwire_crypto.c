#include "cwire_crypto.h"

#include <limits.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* EVP lengths are ints: anything larger is refused, not truncated. */
static int fits_int(size_t length) { return length <= (size_t)INT_MAX; }

int cwire_aes128_ecb(const uint8_t *key, size_t key_length, int encrypt, uint8_t *data, size_t length) {
    if (key_length != 16 || length % 16 != 0 || !fits_int(length)) return 0;
    if (length == 0) return 1;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return 0;
    int ok = EVP_CipherInit_ex(ctx, EVP_aes_128_ecb(), NULL, key, NULL, encrypt ? 1 : 0) == 1
        && EVP_CIPHER_CTX_set_padding(ctx, 0) == 1;
    int written = 0, final_written = 0;
    ok = ok && EVP_CipherUpdate(ctx, data, &written, data, (int)length) == 1;
    ok = ok && EVP_CipherFinal_ex(ctx, data + written, &final_written) == 1;
    ok = ok && (size_t)(written + final_written) == length;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

static EVP_CIPHER_CTX *gcm_context(const uint8_t *key, size_t key_length, const uint8_t *nonce, size_t nonce_length,
                                   int encrypt) {
    if (key_length != 16 || nonce_length != 12) return NULL;
    EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
    if (ctx == NULL) return NULL;
    if (EVP_CipherInit_ex(ctx, EVP_aes_128_gcm(), NULL, NULL, NULL, encrypt) != 1
        || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, (int)nonce_length, NULL) != 1
        || EVP_CipherInit_ex(ctx, NULL, NULL, key, nonce, encrypt) != 1) {
        EVP_CIPHER_CTX_free(ctx);
        return NULL;
    }
    return ctx;
}

int cwire_aes128_gcm_seal(const uint8_t *key, size_t key_length, const uint8_t *nonce, size_t nonce_length,
                          const uint8_t *aad, size_t aad_length, const uint8_t *plain, size_t length,
                          uint8_t *out, uint8_t *tag) {
    if (!fits_int(aad_length) || !fits_int(length)) return 0;
    EVP_CIPHER_CTX *ctx = gcm_context(key, key_length, nonce, nonce_length, 1);
    if (ctx == NULL) return 0;
    int written = 0, ok = 1;
    if (aad_length > 0) ok = EVP_EncryptUpdate(ctx, NULL, &written, aad, (int)aad_length) == 1;
    if (ok && length > 0) ok = EVP_EncryptUpdate(ctx, out, &written, plain, (int)length) == 1 && (size_t)written == length;
    int final_written = 0;
    ok = ok && EVP_EncryptFinal_ex(ctx, out + length, &final_written) == 1 && final_written == 0;
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

int cwire_aes128_gcm_open(const uint8_t *key, size_t key_length, const uint8_t *nonce, size_t nonce_length,
                          const uint8_t *aad, size_t aad_length, const uint8_t *cipher, size_t length,
                          const uint8_t *tag, uint8_t *out) {
    if (!fits_int(aad_length) || !fits_int(length)) return 0;
    EVP_CIPHER_CTX *ctx = gcm_context(key, key_length, nonce, nonce_length, 0);
    if (ctx == NULL) return 0;
    int written = 0, ok = 1;
    if (aad_length > 0) ok = EVP_DecryptUpdate(ctx, NULL, &written, aad, (int)aad_length) == 1;
    if (ok && length > 0) ok = EVP_DecryptUpdate(ctx, out, &written, cipher, (int)length) == 1 && (size_t)written == length;
    /* The tag is only read by the library; the cast is its API's. */
    ok = ok && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, (void *)tag) == 1;
    int final_written = 0;
    ok = ok && EVP_DecryptFinal_ex(ctx, out + length, &final_written) == 1;
    EVP_CIPHER_CTX_free(ctx);
    return ok;
}

int cwire_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t *out) {
    if (!fits_int(key_length)) return 0;
    unsigned int out_length = 0;
    static const uint8_t empty = 0;
    const uint8_t *k = key_length > 0 ? key : &empty;
    const uint8_t *m = length > 0 ? message : &empty;
    return HMAC(EVP_sha256(), k, (int)key_length, m, length, out, &out_length) != NULL && out_length == 32;
}

static int digest(const EVP_MD *md, const uint8_t *data, size_t length, uint8_t *out, unsigned int expected) {
    unsigned int out_length = 0;
    static const uint8_t empty = 0;
    return EVP_Digest(length > 0 ? data : &empty, length, out, &out_length, md, NULL) == 1 && out_length == expected;
}

int cwire_sha256(const uint8_t *data, size_t length, uint8_t *out) { return digest(EVP_sha256(), data, length, out, 32); }

int cwire_md5(const uint8_t *data, size_t length, uint8_t *out) { return digest(EVP_md5(), data, length, out, 16); }

int cwire_random_bytes(uint8_t *out, size_t length) {
    if (!fits_int(length)) return 0;
    return length == 0 || RAND_bytes(out, (int)length) == 1;
}
