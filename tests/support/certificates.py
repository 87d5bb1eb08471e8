"""Throw-away PEM certificates for the TLS tests (openssl, two days): a CA, a second CA that signed
nothing the servers use, a server certificate for 127.0.0.1 and a client certificate, both signed by
the CA."""

from __future__ import annotations

import subprocess
from pathlib import Path


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_ca(d: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.pem",
             "-days", "2", "-subj", f"/CN={name}", cwd=d)  # fmt: skip


def _signed(d: Path, name: str, subject: str, extensions: str | None) -> None:
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key", "-out", f"{name}.csr",
             "-subj", subject, cwd=d)  # fmt: skip
    extra: list[str] = []
    if extensions is not None:
        (d / f"{name}.ext").write_text(extensions)
        extra = ["-extfile", f"{name}.ext"]
    _openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", f"{name}.pem", "-days", "2", *extra, cwd=d)  # fmt: skip


def make_certificates(d: Path) -> Path:
    """``d`` with ca.pem, other-ca.pem, server.pem/server.key (CN and SAN 127.0.0.1) and
    client.pem/client.key."""
    _make_ca(d, "ca")
    _make_ca(d, "other-ca")
    _signed(d, "server", "/CN=lakecdc-test-server", "subjectAltName=IP:127.0.0.1\n")
    _signed(d, "client", "/CN=lakecdc-test-client", None)
    return d
