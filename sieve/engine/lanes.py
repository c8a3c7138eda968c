"""Lanes: an HTTP client for each stream in flight, so that concurrent runs share no connection pool.

httpcore's connection pool, on every request that starts and every response that ends,
looks at every connection it keeps: for each idle one it counts the idle ones again and
asks the socket whether the server closed it (a poll(2), and anyio's getpeername). With
one client for a 38-run batch, each run keeping its connection between turns, that
housekeeping grew with the square of the runs and took a third of the batch's CPU
(docs/performance.md). A lane is a client whose pool holds the connection its own
streams use: the housekeeping is a constant, and the connection stays open for the
lane's next request, as it did in the shared pool. The lanes share one TLS context
(making one reads the certificate bundle: tens of milliseconds).
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import Iterator

import httpx

from sieve.engine import network

# A lane streams one reply at a time; the second connection is for a request to another origin
# between two (a llama.cpp tokenizer on a port of its own).
LANE_LIMITS = httpx.Limits(max_connections=2, max_keepalive_connections=2)


class Lanes:
    """The clients of one gateway: an idle one is reused (the latest first: its connection is the freshest)."""

    def __init__(self) -> None:
        self._idle: list[httpx.AsyncClient] = []
        self._every: list[httpx.AsyncClient] = []
        self._tls: ssl.SSLContext | None = None

    @contextlib.contextmanager
    def lane(self) -> Iterator[httpx.AsyncClient]:
        """A client of its own for one request (and its response, read within the block)."""
        client = self._idle.pop() if self._idle else self._new()
        try:
            yield client
        finally:
            if not client.is_closed and client in self._every:
                self._idle.append(client)

    def __len__(self) -> int:
        return len(self._every)

    async def aclose(self) -> None:
        every, self._every, self._idle = self._every, [], []
        for client in every:
            await client.aclose()

    def _new(self) -> httpx.AsyncClient:
        if self._tls is None:
            self._tls = httpx.create_ssl_context()  # as httpx's own default: certifi, or SSL_CERT_FILE / _DIR
        transport = httpx.AsyncHTTPTransport(verify=self._tls, limits=LANE_LIMITS)
        network.install(transport)  # asyncio's transports under httpcore, where this httpx allows it
        client = httpx.AsyncClient(transport=transport)
        self._every.append(client)
        return client
