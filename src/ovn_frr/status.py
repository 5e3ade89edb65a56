"""The running agent's status socket and Prometheus endpoint (asyncio, in the agent's loop).

Status protocol: the client sends one line (``status`` or ``trace PREFIX``), the agent answers
with one JSON document and closes. ``ask()`` is the blocking client used by the CLI.
Metrics: ``GET /metrics`` in Prometheus' text format, served without a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ovn_frr.reconcilers.base import Sample

log = logging.getLogger(__name__)

Handler = Callable[[str], Awaitable[dict[str, Any]]]
MAX_REQUEST = 4096


class StatusServer:
    def __init__(self, path: str, handle: Handler) -> None:
        self.path = Path(path)
        self.handle = handle
        self._server: asyncio.AbstractServer | None = None

    async def start(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a socket left by a previous run
        self._server = await asyncio.start_unix_server(self._client, path=str(self.path))
        os.chmod(self.path, 0o660)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), timeout=10)
            request = line[:MAX_REQUEST].decode(errors="replace").strip()
            try:
                doc = await self.handle(request)
            except Exception as exc:  # a bug in a report must not take the agent down
                log.exception("status_request_failed request=%r", request)
                doc = {"error": f"{type(exc).__name__}: {exc}"}
            writer.write(json.dumps(doc, default=str).encode() + b"\n")
            await writer.drain()
        except (TimeoutError, ConnectionError, OSError):
            pass
        finally:
            writer.close()


def ask(path: str, request: str, timeout: float = 30.0) -> dict[str, Any]:
    """Send one request to a running agent and return its answer (blocking)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(request.encode() + b"\n")
        chunks = []
        while chunk := s.recv(1 << 16):
            chunks.append(chunk)
    doc: dict[str, Any] = json.loads(b"".join(chunks))
    return doc


# --- metrics ------------------------------------------------------------------------------------


class _Samples(Collector):
    """Families assembled at scrape time from the reconcilers' samples."""

    def __init__(self, samples: Callable[[], Iterable[Sample]]) -> None:
        self.samples = samples

    def collect(self) -> Iterator[Metric]:
        families: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
        for s in self.samples():
            family = families.get(s.name)
            if family is None:
                kind = CounterMetricFamily if s.kind == "counter" else GaugeMetricFamily
                family = families[s.name] = kind(s.name, s.help,
                                                 labels=[k for k, _v in s.labels])  # fmt: skip
            family.add_metric([v for _k, v in s.labels], s.value)
        yield from families.values()


class Metrics:
    def __init__(self, samples: Callable[[], Iterable[Sample]]) -> None:
        self.registry = CollectorRegistry()
        self.registry.register(_Samples(samples))
        self.apply_seconds = Histogram(
            "ovnfrr_frr_apply_seconds", "Time to bring FRR to the desired config (vtysh -f)",
            buckets=(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=self.registry,
        )  # fmt: skip

    def text(self) -> bytes:
        return generate_latest(self.registry)


class MetricsServer:
    """A minimal HTTP/1.0 server for ``GET /metrics``."""

    def __init__(self, host: str, port: int, metrics: Metrics) -> None:
        self.host = host
        self.port = port
        self.metrics = metrics
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._client, self.host, self.port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
            words = head.split(b"\r\n", 1)[0].split()
            if len(words) >= 2 and words[0] == b"GET" and words[1].split(b"?")[0] == b"/metrics":
                status, body = b"200 OK", self.metrics.text()
            else:
                status, body = b"404 Not Found", b"only /metrics here\n"
            writer.write(
                b"HTTP/1.0 " + status + b"\r\nContent-Type: text/plain; version=0.0.4"
                b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
            )
            await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()
