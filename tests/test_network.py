"""The gateway's network: a lane per stream, asyncio's transports under httpcore (sieve/engine/network.py),
over plain TCP and TLS, and httpx's own backend wherever this one cannot be installed.

If a new httpx or httpcore changes what `network.install` relies on, the first test fails and says so:
sieve still works (the fallback tests), but a batch costs about 30% more CPU (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import threading
import time

import httpcore
import httpx
import pytest
import trustme

from sieve.engine import network
from sieve.engine.gateway import Endpoint, Gateway, RequestSettings, Result
from sieve.engine.lanes import Lanes
from tests.support.fakeserver import FakeServer

MESSAGES = [{"role": "user", "content": "Good morning, Havel."}]


async def reply(gateway: Gateway, model: str) -> Result:
    events = [e async for e in gateway.stream(MESSAGES, RequestSettings(model=model))]
    assert isinstance(events[-1], Result)
    return events[-1]


async def stream_of(lanes: Lanes, url: str) -> tuple[object, bytes]:
    """The network stream a lane's request went over, and the body it brought."""
    with lanes.lane() as client:
        body = RequestSettings(model="probe;tokens=20").body(MESSAGES)
        async with client.stream("POST", url + "/chat/completions", json=body) as response:
            return response.extensions["network_stream"], await response.aread()


async def test_this_httpx_takes_the_asyncio_backend_and_a_lane_reads_through_it(fake_server):
    installed = network.install(httpx.AsyncHTTPTransport())
    assert installed, (
        f"httpx {httpx.__version__} / httpcore {httpcore.__version__}: sieve.engine.network cannot install its "
        "backend (the transport's pool or httpcore's backend interface changed); sieve falls back to httpx's own"
    )
    lanes = Lanes()
    try:
        stream, body = await stream_of(lanes, fake_server.base_url)
    finally:
        await lanes.aclose()
    assert isinstance(stream, network.AsyncioStream)
    assert b"Reply 1 from probe:" in body and body.rstrip().endswith(b"data: [DONE]")


async def test_where_the_interface_differs_the_lane_keeps_httpx_own_backend(fake_server, monkeypatch):
    monkeypatch.setattr(network, "_COMPATIBLE", False)  # as an httpcore whose backend interface changed
    lanes = Lanes()
    try:
        stream, body = await stream_of(lanes, fake_server.base_url)
    finally:
        await lanes.aclose()
    assert not isinstance(stream, network.AsyncioStream)
    assert b"Reply 1 from probe:" in body and body.rstrip().endswith(b"data: [DONE]")


async def test_concurrent_replies_each_have_a_lane_whose_connection_the_next_turn_takes():
    # A pool shared by every run looked at all its connections on every request and response (docs/performance.md);
    # a lane's pool holds its own stream's connection, kept for the turn after.
    server = FakeServer(keep_alive=True).start()
    try:
        async with Gateway(Endpoint(server.base_url)) as gateway:
            for _turn in range(3):
                replies = await asyncio.gather(*(reply(gateway, f"run{i};tokens=10;delay=0.005") for i in range(6)))
                assert [r.status for r in replies] == ["complete"] * 6
            assert len(gateway._lanes) == 6  # one per stream in flight at once, no more
    finally:
        server.stop()
    assert server.connections == 6 and len(server.requests) == 18


def test_install_declines_a_transport_it_was_not_written_for():
    assert not network.install(object())  # no pool at all
    proxied = httpx.AsyncHTTPTransport(proxy="http://127.0.0.1:9")  # a proxy's pool, a subclass: left alone
    backend = proxied._pool._network_backend
    assert not network.install(proxied) and proxied._pool._network_backend is backend


def test_a_changed_method_signature_counts_as_another_interface():
    assert network.same_interface()

    class Changed(httpcore.AsyncNetworkStream):
        async def read(self, max_bytes: int, timeout: float | None = None, *, flags: int = 0) -> bytes:
            return b""

    assert not network.same_interface(stream=Changed)


@pytest.fixture(scope="module")
def tls_server():
    """The test server speaking HTTPS with a certificate of a made-up authority; yields (server, that CA)."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    server = FakeServer(tls=context, keep_alive=True).start()
    yield server, ca
    server.stop()


async def test_a_reply_over_tls_streams_through_the_backend_and_keeps_its_connection(tls_server, tmp_path, monkeypatch):
    server, ca = tls_server
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))  # how a user trusts their own authority
    before = server.connections
    async with Gateway(Endpoint(server.base_url)) as gateway:
        first = await reply(gateway, "secure;tokens=25;delay=0.001")
        second = await reply(gateway, "secure;tokens=25")
        lanes = Lanes()
        try:
            stream, _ = await stream_of(lanes, server.base_url)
        finally:
            await lanes.aclose()
    assert first.status == second.status == "complete", (first.error, second.error)
    assert first.text.startswith("Reply 1 from secure:") and first.deltas == 25
    assert server.connections - before == 2  # the gateway's two turns over one connection, the probe's its own
    assert isinstance(stream, network.AsyncioStream)
    assert isinstance(stream.get_extra_info("ssl_object"), ssl.SSLObject)


async def test_a_certificate_nobody_vouches_for_fails_as_a_connection_error(tls_server, monkeypatch):
    server, _ = tls_server
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)  # certifi's authorities: none made this certificate
    async with Gateway(Endpoint(server.base_url)) as gateway:
        result = await reply(gateway, "untrusted;tokens=5")
    assert result.status == "failed" and result.retryable
    assert "cannot connect" in result.error and "CERTIFICATE_VERIFY_FAILED" in result.error


# -- the backend's stream against a plain socket server -----------------------------------------------------


async def serve(handler) -> tuple[asyncio.AbstractServer, int]:
    server = await asyncio.start_server(handler, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.slow
async def test_a_reader_that_falls_behind_pauses_the_socket_and_loses_nothing():
    payload = bytes(range(256)) * 8192  # 2 MiB, sent at once

    async def send(reader, writer):
        writer.write(payload)
        await writer.drain()
        writer.close()

    server, port = await serve(send)
    stream = await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    paused = False
    for _ in range(200):  # the reader is away while the bytes arrive
        await asyncio.sleep(0.005)
        paused = paused or stream._protocol.paused
    got = bytearray()
    while data := await stream.read(65536, timeout=5):
        got += data
        assert len(data) <= 65536
    await stream.aclose()
    server.close()
    assert paused and not stream._protocol.paused  # it stopped reading the socket, and started again
    assert bytes(got) == payload


async def test_a_silent_server_is_a_read_timeout_and_a_reset_a_read_error():
    async def silent(reader, writer):
        await reader.read()  # nothing sent, until the client goes
        writer.close()

    async def reset(reader, writer):
        await reader.read(1)
        # A close that discards: the client is told RST, not FIN (SO_LINGER on, for no time).
        writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()

    server, port = await serve(silent)
    stream = await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    with pytest.raises(httpcore.ReadTimeout):
        await stream.read(100, timeout=0.05)
    await stream.aclose()
    server.close()

    server, port = await serve(reset)
    stream = await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)
    await stream.write(b"x")
    with pytest.raises(httpcore.ReadError):
        while await stream.read(100, timeout=5):
            pass
    with pytest.raises(httpcore.WriteError):
        await stream.write(b"more")
    server.close()


async def test_nobody_listening_is_a_connect_error():
    server, port = await serve(lambda r, w: None)
    server.close()
    await server.wait_closed()
    with pytest.raises(httpcore.ConnectError):
        await network.AsyncioBackend().connect_tcp("127.0.0.1", port, timeout=5)


async def test_a_kept_connection_the_server_closed_unseen_is_not_used_again():
    # A server that answers, then closes a moment later though it said keep-alive (llama.cpp's did, now and
    # then). The close arrives while the event loop is busy, so no callback has told the connection: the
    # socket itself must be asked before a request is written to it, as httpx's own backend does.
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    answered = []

    def serve_two() -> None:  # a thread of its own: the test's event loop is about to block
        for _ in range(2):
            conn, _ = listener.accept()
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    request += conn.recv(4096)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok")
                answered.append(request)
                time.sleep(0.05)  # then gone

    thread = threading.Thread(target=serve_two, daemon=True)
    thread.start()
    lanes = Lanes()
    try:
        with lanes.lane() as client:
            first = await client.get(f"http://127.0.0.1:{port}/")
            time.sleep(0.3)  # the loop busy elsewhere: the close reaches the socket, not the protocol
            second = await client.get(f"http://127.0.0.1:{port}/")
    finally:
        await lanes.aclose()
        thread.join(5)
        listener.close()
    assert first.text == second.text == "ok" and len(answered) == 2


async def test_a_request_lost_on_a_connection_closed_just_then_is_sent_again_at_once():
    # The server closes the kept connection as the second turn's request arrives, answering nothing: the
    # gateway sends it again at once on a new connection, not after the session's back-off, and not as a failure.
    server = FakeServer(keep_alive=True).start()
    try:
        async with Gateway(Endpoint(server.base_url)) as gateway:
            first = await reply(gateway, "stale;tokens=8;stale=1")
            second = await reply(gateway, "stale;tokens=8;stale=1")
    finally:
        server.stop()
    assert (first.status, second.status) == ("complete", "complete"), second.error
    assert second.error is None and second.text == first.text
    assert server.connections == 2 and len(server.requests) == 2  # the lost one never reached a reply
