"""A TCP relay in front of a real server (the machine's Redis) that a test can cut and restore:
the server going away for the process under test, without stopping it for anyone else."""

from __future__ import annotations

import asyncio
import contextlib


class TcpRelay:
    """Relays every connection to ``127.0.0.1:<port>`` to ``(host, target_port)``."""

    def __init__(self, host: str, target_port: int) -> None:
        self.host, self.target_port = host, target_port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    async def start(self) -> int:
        """Listen (again on the same port after :meth:`cut`); returns the port."""
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def cut(self) -> None:
        """Stop listening and drop every open connection."""
        assert self._server is not None
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()
        self._server = None

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(self.host, self.target_port)
        self._writers |= {writer, up_writer}

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, OSError):
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            dst.close()

        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            self._writers -= {writer, up_writer}
