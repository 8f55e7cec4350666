"""A throwaway certificate authority for fakes served over TLS on 127.0.0.1.

`LocalTLS()` makes a CA and a server certificate for 127.0.0.1/localhost signed by it, once per
process (RSA keys take a moment): `server_context()` for the fake's site, `ca_file` for the
client that must trust it (a product setting such as `channels.wecom.ca_file`).
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from functools import cache
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class LocalTLS:
    def __init__(self, directory: Path) -> None:
        now = datetime.datetime.now(datetime.UTC)
        start, end = now - datetime.timedelta(days=1), now + datetime.timedelta(days=30)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca = (
            x509.CertificateBuilder()
            .subject_name(_name("Antler test CA"))
            .issuer_name(_name("Antler test CA"))
            .public_key(ca_key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        key = ec.generate_private_key(ec.SECP256R1())
        names = [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
        leaf = (
            x509.CertificateBuilder()
            .subject_name(_name("127.0.0.1"))
            .issuer_name(ca.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(start)
            .not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName(names), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        self.ca_file = directory / "ca.pem"
        self.ca_file.write_bytes(_pem(ca))
        self.cert_file = directory / "server.pem"
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        self.cert_file.write_bytes(_pem(leaf) + key_pem)

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert_file)
        return context


@cache
def local_tls() -> LocalTLS:
    """The process's one test CA (its files in a temporary directory)."""
    return LocalTLS(Path(tempfile.mkdtemp(prefix="antler-tls-")))
