"""A TCP relay in front of a gRPC server that stops a chosen request on the wire, so a test
can kill a process at an exact point of a write: while the request is still in the client's
hands, while the server has it and has not answered, or after the server answered and before
the client heard.

The process under test is pointed at :attr:`WireTap.port` (its peer-address setting) instead of
the server. :meth:`WireTap.arm` names bytes that only the request of interest carries (gRPC
sends protobuf uncompressed, so a JSON payload's text is on the wire verbatim): the first chunk
the client sends that holds them is held back (``hold_request``) until :meth:`release`, and,
with ``hold_replies``, nothing the server sends on that connection afterwards reaches the
client. Held bytes are never delivered once a side has gone: killing either process with
something held loses exactly what was held.

It runs its own event loop in a thread, so blocking tests can use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass
class Hit:
    """What happened to the armed request (each event is set once)."""

    seen: threading.Event = field(default_factory=threading.Event)  # the client sent it
    delivered: threading.Event = field(default_factory=threading.Event)  # written to the server
    held_reply_bytes: int = 0  # what the server sent afterwards that the client never got


class WireTap:
    def __init__(self, target_port: int, *, host: str = "127.0.0.1") -> None:
        self.host, self.target_port = host, target_port
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None
        self._pattern = b""
        self._hold_request = False
        self._hold_replies = False
        self._hit: Hit | None = None
        self._release: asyncio.Event | None = None
        self._deliver = True
        self._writers: set[asyncio.StreamWriter] = set()

    def start(self) -> int:
        self._thread.start()
        self.port = self._call(self._listen())
        return self.port

    def close(self) -> None:
        self._call(self._shutdown())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def arm(self, pattern: bytes, *, hold_request: bool, hold_replies: bool) -> Hit:
        """Watch the client's bytes for ``pattern`` (its first occurrence from now on)."""

        def set_up() -> Hit:
            self._pattern = pattern
            self._hold_request, self._hold_replies = hold_request, hold_replies
            self._hit = Hit()
            self._release = asyncio.Event()
            self._deliver = True
            return self._hit

        return self._call(_run(set_up))

    def release(self, *, deliver: bool = True) -> None:
        """Let a held request go on to the server, or (``deliver=False``, its client is dead)
        drop it and close that connection."""
        release = self._release
        assert release is not None, "nothing is armed"

        def go() -> None:
            self._deliver = deliver
            release.set()

        self._loop.call_soon_threadsafe(go)

    def disarm(self) -> None:
        """Stop watching; connections made from now on are relayed plainly."""

        def clear() -> None:
            self._pattern, self._hit = b"", None

        self._call(_run(clear))

    # -- inside the loop ------------------------------------------------------------------

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=10)

    async def _listen(self) -> int:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self._server.sockets[0].getsockname()[1])

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        except OSError:
            writer.close()  # the server is down: the client sees a refused connection
            return
        self._writers |= {writer, up_writer}
        mine: list[Hit] = []  # the hit on this connection, once there is one

        async def requests() -> None:
            tail = b""
            with _quiet():
                while data := await reader.read(65536):
                    hit, release = self._hit, self._release
                    window = tail + data
                    tail = window[len(window) - max(len(self._pattern) - 1, 0) :]
                    if hit and release and not hit.seen.is_set() and self._pattern in window:
                        self._hit = None  # the first occurrence only
                        mine.append(hit)
                        hit.seen.set()
                        if self._hold_request:
                            await release.wait()
                            if not self._deliver:
                                break  # its client is gone: the server never gets it
                        up_writer.write(data)
                        await up_writer.drain()
                        hit.delivered.set()
                        continue
                    up_writer.write(data)
                    await up_writer.drain()
            up_writer.close()

        async def replies() -> None:
            with _quiet():
                while data := await up_reader.read(65536):
                    if mine and mine[0].delivered.is_set() and self._hold_replies:
                        mine[0].held_reply_bytes += len(data)
                        continue
                    writer.write(data)
                    await writer.drain()
            writer.close()

        try:
            await asyncio.gather(requests(), replies())
        finally:
            self._writers -= {writer, up_writer}
            writer.close()
            up_writer.close()


async def _run(fn: Callable[[], T]) -> T:
    return fn()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with contextlib.suppress(ConnectionError, OSError):
        yield
