"""A tiny MQTT 3.1.1 client over TLS (standard library only): CONNECT, PUBLISH (QoS 0/1, waits
for PUBACK), SUBSCRIBE, DISCONNECT. The stand-in uses it to push tokens as the cloud does."""
import socket
import ssl
import struct


class MQTTError(Exception):
    pass


def _string(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack(">H", len(data)) + data


def _remaining_length(n):
    out = bytearray()
    while True:
        byte, n = n % 128, n // 128
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


class MiniMQTT:
    def __init__(self, host, port, ca_file, client_id, username, password, timeout=5):
        context = ssl.create_default_context(cafile=ca_file)
        raw = socket.create_connection((host, port), timeout=timeout)
        self.sock = context.wrap_socket(raw, server_hostname=host)
        self.next_id = 1
        flags = 0x02 | 0x80 | 0x40   # clean session, username, password
        variable = _string("MQTT") + bytes([4, flags]) + struct.pack(">H", 30)
        payload = _string(client_id) + _string(username) + _string(password)
        self._send(0x10, variable + payload)
        kind, body = self._read()
        if kind != 0x20 or len(body) != 2:
            raise MQTTError("no CONNACK")
        if body[1] != 0:
            raise MQTTError(f"CONNACK {body[1]}")

    def _send(self, header, body):
        self.sock.sendall(bytes([header]) + _remaining_length(len(body)) + body)

    def _exact(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise MQTTError("connection closed by the broker")
            data += chunk
        return data

    def _read(self):
        header = self._exact(1)[0]
        length, shift = 0, 0
        while True:
            byte = self._exact(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        return header & 0xF0, self._exact(length)

    def publish(self, topic, payload, qos=1, retain=False):
        header = 0x30 | (qos << 1) | (1 if retain else 0)
        body = _string(topic)
        packet_id = self.next_id
        if qos:
            body += struct.pack(">H", packet_id)
            self.next_id = self.next_id % 65535 + 1
        self._send(header, body + payload)
        while qos:
            kind, data = self._read()
            if kind == 0x40 and struct.unpack(">H", data[:2])[0] == packet_id:
                return

    def subscribe(self, topic, qos=1):
        """Subscribes and returns the granted QoS (0x80: refused)."""
        packet_id = self.next_id
        self.next_id = self.next_id % 65535 + 1
        self._send(0x82, struct.pack(">H", packet_id) + _string(topic) + bytes([qos]))
        while True:
            kind, data = self._read()
            if kind == 0x90 and struct.unpack(">H", data[:2])[0] == packet_id:
                return data[2]

    def receive(self):
        """The next PUBLISH as (topic, payload); acknowledges QoS 1."""
        while True:
            header_kind, data = self._read_with_flags()
            kind, flags = header_kind & 0xF0, header_kind & 0x0F
            if kind != 0x30:
                continue
            (n,) = struct.unpack(">H", data[:2])
            topic = data[2:2 + n].decode()
            rest = data[2 + n:]
            if (flags >> 1) & 3:
                self._send(0x40, rest[:2])
                rest = rest[2:]
            return topic, rest

    def _read_with_flags(self):
        header = self._exact(1)[0]
        length, shift = 0, 0
        while True:
            byte = self._exact(1)[0]
            length |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                break
        return header, self._exact(length)

    def close(self):
        try:
            self._send(0xE0, b"")
        except OSError:
            pass
        self.sock.close()
