"""A throwaway test CA and a server certificate for 127.0.0.1/localhost (python3-cryptography).

One certificate serves iotdns, the ATOP API and the broker's TLS listener, as one `caArr[0]` trusts
both on Tuya's cloud (src/iotdns.c). A second, unrelated CA (`wrong-ca.pem`) is written for the
"wrong CA" test: it signed nothing here. Nothing in this folder is secret.
"""
import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(text):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _ca(common_name, now):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(_name(common_name))
        .issuer_name(_name(common_name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=False, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False),
            critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


class TestPKI:
    """Writes ca.pem, ca.der, server.pem, server.key and wrong-ca.pem into `directory`."""

    def __init__(self, directory, extra_ips=()):
        now = datetime.datetime.now(datetime.timezone.utc)
        ca_key, ca_cert = _ca("ipcemu Tuya stand-in test CA", now)
        _, wrong_cert = _ca("ipcemu stand-in wrong CA (signed nothing)", now)
        key = ec.generate_private_key(ec.SECP256R1())
        cert = (
            x509.CertificateBuilder()
            .subject_name(_name("127.0.0.1"))
            .issuer_name(ca_cert.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ("127.0.0.1", *extra_ips)]
                    + [x509.DNSName("localhost")]),
                critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        self.directory = directory
        self.ca_pem = os.path.join(directory, "ca.pem")
        self.ca_der = os.path.join(directory, "ca.der")
        self.server_pem = os.path.join(directory, "server.pem")
        self.server_key = os.path.join(directory, "server.key")
        self.wrong_ca_pem = os.path.join(directory, "wrong-ca.pem")
        self.ca_der_bytes = ca_cert.public_bytes(serialization.Encoding.DER)
        _write(self.ca_pem, ca_cert.public_bytes(serialization.Encoding.PEM))
        _write(self.ca_der, self.ca_der_bytes)
        _write(self.server_pem, cert.public_bytes(serialization.Encoding.PEM))
        _write(self.server_key, key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption()), mode=0o600)
        _write(self.wrong_ca_pem, wrong_cert.public_bytes(serialization.Encoding.PEM))


def _write(path, data, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
