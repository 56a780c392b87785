"""The SDK's signing and encryption, as the cloud must recompute them (PROTOCOL.md 9).

Facts from tuya/tuya-connect-kit-for-mqtt-embedded-c:
- src/atop_base.c `atop_url_params_sign`: md5 over every `k=v||` in the request's order followed by
  the key, written as lower-case hex.
- src/atop_base.c `atop_request_data_encode`: `data=` + upper-case hex of AES-128-ECB(key[0..15],
  PKCS#7(JSON)); `atop_response_data_decode`: `result` is base64 of AES-128-ECB(key[0..15]) JSON.
- src/mqtt_service.c `tuya_mqtt_signature_tool`: MQTT password = lower-case hex of md5(secret)
  bytes 4..11 (the authkey on the direct link, the secKey on the device link).
- src/mqtt_service.c `pv22_packet_encode`: "2.2" | crc32 BE | seq BE | from | AES-128-ECB(PKCS#7).
"""
import base64
import hashlib
import struct
import zlib

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


class CryptoError(ValueError):
    """A payload that does not decrypt or unpad: the sender used another key, or sent garbage."""


def sign(params, key):
    """md5 hex of `k=v||`... + key, over `params` (a list of (k, v)) in the given order."""
    text = "".join(f"{k}={v}||" for k, v in params) + key
    return hashlib.md5(text.encode()).hexdigest()


def mqtt_password(secret):
    """Lower-case hex of md5(secret) bytes 4..11 (16 characters)."""
    return hashlib.md5(secret.encode()).digest()[4:12].hex()


def _aes_key(key):
    raw = key.encode() if isinstance(key, str) else bytes(key)
    if len(raw) < 16:
        raise CryptoError(f"key of {len(raw)} bytes; 16 are needed")
    return raw[:16]


def pkcs7_pad(data):
    n = 16 - len(data) % 16
    return data + bytes([n]) * n


def pkcs7_unpad(data):
    if not data or len(data) % 16:
        raise CryptoError(f"ciphertext of {len(data)} bytes is not a positive multiple of 16")
    n = data[-1]
    if n < 1 or n > 16 or data[-n:] != bytes([n]) * n:
        raise CryptoError("bad PKCS#7 padding (wrong key?)")
    return data[:-n]


def ecb_encrypt(key, plain):
    enc = Cipher(algorithms.AES(_aes_key(key)), modes.ECB()).encryptor()
    return enc.update(pkcs7_pad(plain)) + enc.finalize()


def ecb_decrypt(key, cipher):
    if not cipher or len(cipher) % 16:
        raise CryptoError(f"ciphertext of {len(cipher)} bytes is not a positive multiple of 16")
    dec = Cipher(algorithms.AES(_aes_key(key)), modes.ECB()).decryptor()
    return pkcs7_unpad(dec.update(cipher) + dec.finalize())


def encode_request_body(key, json_text):
    """What the SDK POSTs: `data=` + upper-case hex of the encrypted JSON."""
    return "data=" + ecb_encrypt(key, json_text.encode()).hex().upper()


def decode_request_body(key, body):
    """The JSON text of a POSTed `data=HEX` body. Strict: upper-case hex, as the SDK writes it."""
    if not body.startswith(b"data="):
        raise CryptoError("the body does not start with 'data='")
    hex_text = body[5:].decode("ascii", "replace").strip()
    if hex_text != hex_text.upper():
        raise CryptoError("the body's hex is not upper-case (the SDK writes %02X)")
    try:
        cipher = bytes.fromhex(hex_text)
    except ValueError as error:
        raise CryptoError(f"the body is not hex: {error}") from None
    return ecb_decrypt(key, cipher).decode("utf-8")


def encode_result(key, json_text):
    """An answer's `result`: base64 of the encrypted JSON."""
    return base64.b64encode(ecb_encrypt(key, json_text.encode())).decode()


def decode_result(key, b64):
    return ecb_decrypt(key, base64.b64decode(b64)).decode("utf-8")


def pv22_seal(key, json_text, seq, source=0):
    """One pv2.2 payload (PROTOCOL.md 2.1). `source` is written big-endian."""
    body = struct.pack(">II", seq & 0xFFFFFFFF, source & 0xFFFFFFFF) + ecb_encrypt(key, json_text.encode())
    return b"2.2" + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF) + body


def pv22_open(key, payload):
    """(seq, from bytes, json text) of a pv2.2 payload; checks the prefix and the crc."""
    if len(payload) < 15 or payload[:3] != b"2.2":
        raise CryptoError("not a pv2.2 payload")
    (crc,) = struct.unpack(">I", payload[3:7])
    if zlib.crc32(payload[7:]) & 0xFFFFFFFF != crc:
        raise CryptoError("pv2.2 crc mismatch")
    (seq,) = struct.unpack(">I", payload[7:11])
    return seq, payload[11:15], ecb_decrypt(key, payload[15:]).decode("utf-8")
