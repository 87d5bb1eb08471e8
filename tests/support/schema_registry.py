"""A small Confluent-compatible Schema Registry for the tests (no registry server can be installed
here): the endpoints confluent-kafka's ``SchemaRegistryClient`` and ``AvroSerializer`` use, in memory,
on a loopback port.

    POST /subjects/{subject}/versions          register (same schema again: same id) -> {"id": N}
    POST /subjects/{subject}                   look a schema up under a subject
    GET  /schemas/ids/{id}                     -> {"schema": "...", "schemaType": "AVRO"}
    GET  /subjects, /subjects/{subject}/versions, /subjects/{subject}/versions/{n|latest}
    GET|PUT /config[/{subject}]                compatibility level (BACKWARD; every change is accepted)
    POST /compatibility/subjects/{subject}/versions[/{v}]  -> {"is_compatible": true}

``users`` ({user: password}) makes it ask for HTTP basic authentication (401 otherwise), and ``tls``
serves https:// with a server certificate (and, with ``TlsFiles.client_ca``, asks for a client
certificate signed by it).

``down()`` / ``up()`` make every request answer 503 (as a registry behind a load balancer that lost it),
``failures[id] = n`` the next n lookups of one id, ``id_requests`` counts the ``GET /schemas/ids`` calls,
and ``stop()`` closes the socket (connection refused).
"""

from __future__ import annotations

import base64
import json
import ssl
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass(frozen=True)
class TlsFiles:
    certificate: str  # the server's PEM certificate (for 127.0.0.1)
    key: str  # its private key
    client_ca: str | None = None  # set: a client certificate signed by this CA is required


class FakeSchemaRegistry:
    def __init__(self, port: int = 0, users: dict[str, str] | None = None, tls: TlsFiles | None = None) -> None:
        self.users = users
        self.unauthorized = 0  # requests refused for missing or wrong credentials
        self.schemas: list[str] = []  # id - 1 -> schema text
        self.subjects: dict[str, list[int]] = {}  # subject -> ids by version
        self.compatibility = "BACKWARD"
        self.available = True
        self.id_requests = 0
        # schema id -> how many more GET /schemas/ids/{id} answer 503 (a registry failing mid-stream)
        self.failures: dict[int, int] = {}
        self._lock = threading.Lock()
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                registry._handle(self, "GET", None)

            def do_POST(self) -> None:
                registry._handle(self, "POST", self._body())

            def do_PUT(self) -> None:
                registry._handle(self, "PUT", self._body())

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                return json.loads(self.rfile.read(length) or b"{}")

        self._server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls.certificate, tls.key)
            if tls.client_ca is not None:
                context.verify_mode = ssl.CERT_REQUIRED
                context.load_verify_locations(tls.client_ca)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
            self.url = f"https://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def down(self) -> None:
        self.available = False

    def up(self) -> None:
        self.available = True

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeSchemaRegistry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def register(self, subject: str, schema: str) -> int:
        with self._lock:
            canonical = json.dumps(json.loads(schema), sort_keys=True)
            ids = self.subjects.setdefault(subject, [])
            for i in ids:
                if json.dumps(json.loads(self.schemas[i - 1]), sort_keys=True) == canonical:
                    return i
            for i, text in enumerate(self.schemas, 1):  # the same schema under another subject: same id
                if json.dumps(json.loads(text), sort_keys=True) == canonical:
                    ids.append(i)
                    return i
            self.schemas.append(schema)
            ids.append(len(self.schemas))
            return len(self.schemas)

    def _handle(self, req: BaseHTTPRequestHandler, method: str, body: Any) -> None:
        if not self.available:
            return self._send(req, 503, {"error_code": 50003, "message": "registry unavailable"})
        if self.users is not None and not self._authorized(req.headers.get("Authorization", "")):
            self.unauthorized += 1
            return self._send(req, 401, {"error_code": 40101, "message": "Unauthorized"})
        path = urlsplit(req.path).path.rstrip("/")
        parts = [unquote(p) for p in path.split("/") if p]
        try:
            status, answer = self._route(method, parts, body)
        except LookupError as exc:
            status, answer = 404, {"error_code": 40403 if "schema" in str(exc) else 40401, "message": str(exc)}
        self._send(req, status, answer)

    def _authorized(self, header: str) -> bool:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "basic" or self.users is None:
            return False
        user, _, password = base64.b64decode(token.strip()).decode().partition(":")
        return self.users.get(user) == password

    def _route(self, method: str, parts: list[str], body: Any) -> tuple[int, Any]:
        if parts[:2] == ["schemas", "ids"] and method == "GET":
            self.id_requests += 1
            n = int(parts[2])
            if self.failures.get(n, 0) > 0:
                self.failures[n] -= 1
                return 503, {"error_code": 50003, "message": "registry unavailable"}
            if not 0 < n <= len(self.schemas):
                raise LookupError(f"schema {n} not found")
            return 200, {"schema": self.schemas[n - 1], "schemaType": "AVRO"}
        if parts == ["subjects"]:
            return 200, sorted(self.subjects)
        if parts and parts[0] == "subjects" and len(parts) >= 2:
            subject = parts[1]
            if method == "POST" and parts[2:] == ["versions"]:
                return 200, {"id": self.register(subject, body["schema"])}
            ids = self.subjects.get(subject)
            if ids is None:
                raise LookupError(f"subject {subject} not found")
            if method == "POST" and len(parts) == 2:  # lookup
                canonical = json.dumps(json.loads(body["schema"]), sort_keys=True)
                for version, i in enumerate(ids, 1):
                    if json.dumps(json.loads(self.schemas[i - 1]), sort_keys=True) == canonical:
                        return 200, self._version(subject, version)
                raise LookupError(f"schema not found under {subject}")
            if parts[2:] == ["versions"]:
                return 200, list(range(1, len(ids) + 1))
            if len(parts) == 4 and parts[2] == "versions":
                version = len(ids) if parts[3] == "latest" else int(parts[3])
                if not 0 < version <= len(ids):
                    raise LookupError(f"version {version} not found")
                return 200, self._version(subject, version)
        if parts and parts[0] == "config":
            if method == "PUT":
                self.compatibility = body.get("compatibility", self.compatibility)
                return 200, {"compatibility": self.compatibility}
            return 200, {"compatibilityLevel": self.compatibility}
        if parts and parts[0] == "compatibility":
            return 200, {"is_compatible": True}
        raise LookupError(f"no endpoint {method} /{'/'.join(parts)}")

    def _version(self, subject: str, version: int) -> dict[str, Any]:
        i = self.subjects[subject][version - 1]
        return {"subject": subject, "version": version, "id": i, "schema": self.schemas[i - 1], "schemaType": "AVRO"}

    @staticmethod
    def _send(req: BaseHTTPRequestHandler, status: int, answer: Any) -> None:
        data = json.dumps(answer).encode()
        req.send_response(status)
        req.send_header("Content-Type", "application/vnd.schemaregistry.v1+json")
        req.send_header("Content-Length", str(len(data)))
        req.end_headers()
        req.wfile.write(data)
