"""A local S3 server for the tests: moto in server mode (``ThreadedMotoServer``) on a free loopback
port, with one bucket, and the ``--catalog-conf`` options that reach it (Paimon's spellings).

    with S3Server() as s3:
        s3.create_bucket("lake")
        s3.catalog_conf  # {"s3.endpoint": "http://127.0.0.1:PORT", "s3.access-key": ..., ...}
        s3.keys("lake", "warehouse/")  # every object key under a prefix

moto keeps its objects in memory and honours S3's conditional writes (If-None-Match / If-Match on
PutObject), which the table leases use.
"""

from __future__ import annotations

import socket
from typing import Any

ACCESS_KEY = "lakecdc-test-key"
SECRET_KEY = "lakecdc-test-secret"
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class S3Server:
    def __init__(self) -> None:
        import logging

        from moto.server import ThreadedMotoServer

        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # a line per request otherwise
        self.port = _free_port()
        self._server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self._server.start()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.catalog_conf = {
            "s3.endpoint": self.endpoint,
            "s3.access-key": ACCESS_KEY,
            "s3.secret-key": SECRET_KEY,
            "s3.region": REGION,
            "s3.path.style.access": "true",
        }
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3

            self._client = boto3.client(
                "s3",
                endpoint_url=self.endpoint,
                aws_access_key_id=ACCESS_KEY,
                aws_secret_access_key=SECRET_KEY,
                region_name=REGION,
            )
        return self._client

    def create_bucket(self, bucket: str) -> None:
        self.client.create_bucket(Bucket=bucket)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        out: list[str] = []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            out += [o["Key"] for o in page.get("Contents", [])]
        return sorted(out)

    def put(self, bucket: str, key: str, body: bytes) -> None:
        self.client.put_object(Bucket=bucket, Key=key, Body=body)

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> S3Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
