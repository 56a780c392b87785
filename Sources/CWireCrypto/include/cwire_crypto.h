#ifndef IPCEMU_CWIRE_CRYPTO_H
#define IPCEMU_CWIRE_CRYPTO_H
/*
 * The few primitives the wire and the Tuya cloud join use (PROTOCOL.md 2.1, 4, 9), over the
 * system's OpenSSL libcrypto: AES-128 whole blocks without padding (ECB), AES-128-GCM with a
 * 12-byte nonce and a 16-byte tag, HMAC-SHA256, SHA-256, MD5, and random bytes. Each returns 1 on
 * success and 0 on failure (a wrong key length, a refused tag, libcrypto's own error). No OpenSSL
 * header here: Swift sees only these functions.
 */
#include <stddef.h>
#include <stdint.h>

/* Encrypts (encrypt != 0) or decrypts `length` bytes in place, block by block, with a 16-byte key.
 * `length` must be a multiple of 16. */
int cwire_aes128_ecb(const uint8_t *key, size_t key_length, int encrypt, uint8_t *data, size_t length);

/* AES-128-GCM: `out` receives `length` bytes of ciphertext, `tag` 16 bytes. */
int cwire_aes128_gcm_seal(const uint8_t *key, size_t key_length, const uint8_t *nonce, size_t nonce_length,
                          const uint8_t *aad, size_t aad_length, const uint8_t *plain, size_t length,
                          uint8_t *out, uint8_t *tag);

/* Returns 0 when the 16-byte tag does not authenticate the ciphertext and the AAD. */
int cwire_aes128_gcm_open(const uint8_t *key, size_t key_length, const uint8_t *nonce, size_t nonce_length,
                          const uint8_t *aad, size_t aad_length, const uint8_t *cipher, size_t length,
                          const uint8_t *tag, uint8_t *out);

/* `out` receives 32 bytes. */
int cwire_hmac_sha256(const uint8_t *key, size_t key_length, const uint8_t *message, size_t length, uint8_t *out);

/* `out` receives 32 bytes. */
int cwire_sha256(const uint8_t *data, size_t length, uint8_t *out);

/* `out` receives 16 bytes. */
int cwire_md5(const uint8_t *data, size_t length, uint8_t *out);

/* Fills `out` from the system's cryptographic random source. */
int cwire_random_bytes(uint8_t *out, size_t length);

#endif
