"""An httpcore network backend on asyncio's own transports: the gateway's reads without anyio's cost.

httpx reads a stream through httpcore, which reads the network through anyio. For a reply
that streams a token at a time, each read went through a cancel scope for the timeout,
sniffio to find the event loop, and an epoll change to pause the socket and one to
resume it: about half of the cost of a read (docs/performance.md). Here a read takes
what an asyncio protocol has buffered, or waits on one future with one timer for the
timeout; reading is paused only when a reader falls a quarter of a megabyte behind.

httpx gives no public way to choose the backend of its transport: `install` sets it on
the transport's httpcore pool (`_pool._network_backend`), and only where that pool and
httpcore's backend interface are exactly what this module was written against. Anywhere
else it leaves the transport as it was (httpx's own anyio backend), and
`tests/test_network.py` says which happened.
"""

from __future__ import annotations

import asyncio
import inspect
import select
import socket
import ssl
from collections.abc import Iterable
from typing import Any

import httpcore

# Reading pauses when this much is buffered and unread, and resumes below the low mark.
HIGH_WATER = 256 * 1024
LOW_WATER = 64 * 1024
HAPPY_EYEBALLS_DELAY = 0.25  # RFC 8305's, as anyio's connect_tcp uses


class _Buffered(asyncio.Protocol):
    """A connection's incoming bytes, kept until read, and whether it ended (and how)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.chunks: list[bytes] = []
        self.size = 0
        self.ended = False
        self.error: BaseException | None = None
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None
        self.writable: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.size += len(data)
        if self.size > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)

    def pause_writing(self) -> None:
        self.writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.writable is not None and not self.writable.done():
            self.writable.set_result(None)
        self.writable = None

    def take(self, max_bytes: int) -> bytes:
        """Up to `max_bytes` of what is buffered (a chunk as it came, without a copy, where it fits)."""
        first = self.chunks[0]
        if len(self.chunks) == 1 and len(first) <= max_bytes:
            self.chunks.clear()
            data = first
        else:
            joined = b"".join(self.chunks)
            data, rest = joined[:max_bytes], joined[max_bytes:]
            self.chunks[:] = [rest] if rest else []
        self.size -= len(data)
        if self.paused and self.size < LOW_WATER and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


def _readable(sock: Any) -> bool:
    """Whether a socket has something to read (data, or the other side's close) right now; a closed one has."""
    if sock is None or sock.fileno() < 0:
        return True
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock.fileno(), select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])  # pragma: no cover - Windows


def _time_out(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class AsyncioStream(httpcore.AsyncNetworkStream):
    """One connection (plain or TLS) as httpcore reads and writes it."""

    def __init__(self, transport: asyncio.Transport, protocol: _Buffered) -> None:
        self._transport = transport
        self._protocol = protocol

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if not protocol.chunks and not protocol.ended:
            loop = asyncio.get_running_loop()
            waiter = protocol.waiter = loop.create_future()
            timer = loop.call_later(timeout, _time_out, waiter) if timeout is not None else None
            try:
                await waiter
            except TimeoutError:
                raise httpcore.ReadTimeout(f"no data for {timeout:g} s") from None
            finally:
                protocol.waiter = None
                if timer is not None:
                    timer.cancel()
        if protocol.chunks:
            return protocol.take(max_bytes)
        if protocol.error is not None:
            raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
        return b""  # the other side closed the connection

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        writable = self._protocol.writable
        if writable is not None:  # the kernel's buffer is full: wait for it to drain
            try:
                await asyncio.wait_for(asyncio.shield(writable), timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout(f"could not write for {timeout:g} s") from None
            if self._protocol.error is not None:
                raise httpcore.WriteError(str(self._protocol.error))

    async def aclose(self) -> None:
        self._transport.close()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.close()
            raise httpcore.ConnectTimeout(f"no TLS handshake within {timeout:g} s") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # pragma: no cover - start_tls returns None only for a closed transport
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        self._protocol.transport = transport
        return AsyncioStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":  # asked of an idle connection: has the server closed it (or sent anything)?
            # The socket itself is asked too: a close that arrived since the event loop last looked is not in
            # the protocol yet, and a request written to that connection would be lost ("Server disconnected").
            protocol = self._protocol
            return bool(protocol.chunks) or protocol.ended or _readable(self._transport.get_extra_info("socket"))
        name = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername", "socket": "socket"}
        return self._transport.get_extra_info(name[info]) if info in name else None


class AsyncioBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    _Buffered,
                    host,
                    port,
                    local_addr=(local_address, 0) if local_address else None,
                    happy_eyeballs_delay=HAPPY_EYEBALLS_DELAY,
                )  # asyncio sets TCP_NODELAY on a TCP connection, as anyio does
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"could not connect within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return _with_options(transport, protocol, socket_options)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_Buffered, path)
        except TimeoutError:
            raise httpcore.ConnectTimeout(f"could not connect within {timeout:g} s") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        return _with_options(transport, protocol, socket_options)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def _with_options(
    transport: asyncio.BaseTransport, protocol: _Buffered, socket_options: Iterable[Any] | None
) -> AsyncioStream:
    sock: socket.socket | None = transport.get_extra_info("socket")
    for option in socket_options or ():
        if sock is not None:
            sock.setsockopt(*option)
    return AsyncioStream(transport, protocol)  # type: ignore[arg-type]


def same_interface(backend: type = httpcore.AsyncNetworkBackend, stream: type = httpcore.AsyncNetworkStream) -> bool:
    """Whether httpcore's backend interface is the one these classes implement, method for method."""
    pairs = [
        (backend, AsyncioBackend, ("connect_tcp", "connect_unix_socket", "sleep")),
        (stream, AsyncioStream, ("read", "write", "aclose", "start_tls", "get_extra_info")),
    ]
    for theirs, ours, names in pairs:
        for name in names:
            if not hasattr(theirs, name):
                return False
            if list(inspect.signature(getattr(theirs, name)).parameters) != list(
                inspect.signature(getattr(ours, name)).parameters
            ):
                return False
    return True


_COMPATIBLE: bool | None = None


def install(transport: object) -> bool:
    """Give an httpx transport this backend; whether it could (else the transport is left as it was)."""
    global _COMPATIBLE
    if _COMPATIBLE is None:
        _COMPATIBLE = same_interface()
    pool = getattr(transport, "_pool", None)
    # Exactly httpcore's pool (not a proxy's), with the attribute its connections are made from.
    if not _COMPATIBLE or type(pool) is not httpcore.AsyncConnectionPool or not hasattr(pool, "_network_backend"):
        return False
    pool._network_backend = AsyncioBackend()
    return True
