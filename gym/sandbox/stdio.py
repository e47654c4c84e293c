"""A process's stdin/stdout inside a container, over the docker exec attach socket.

Without a TTY, Docker multiplexes stdout and stderr on one socket as frames:
an 8-byte header (stream type, 3 zero bytes, big-endian length) then payload.
`read()` returns stdout bytes only; stderr is kept in `stderr_tail` for error
messages (an MCP server's traceback, say).
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import threading

STDOUT, STDERR = 1, 2


class DockerStdio:
    """Reads go through the exec response's buffered reader (it may already hold the first
    frames), writes straight to the socket under it."""

    def __init__(self, reader: io.BufferedReader, response):
        self._reader = reader
        self._response = response  # held: the reader and its socket are closed when it is collected
        self._sock: socket.socket = reader.raw._sock  # the SocketIO's socket
        self._sock.settimeout(None)
        self._pending = b""
        self._closed = False
        self._write_lock = threading.Lock()
        self.stderr_tail = b""

    def write(self, data: bytes) -> None:
        with self._write_lock:
            self._sock.sendall(data)

    def _recv_exact(self, n: int) -> bytes:
        data = self._reader.read(n)  # a buffered read returns n bytes, or fewer only at EOF
        return data if len(data) == n else b""

    def read(self, max_bytes: int = 65536) -> bytes:
        while not self._pending:
            header = self._recv_exact(8)
            if not header:
                return b""
            kind, length = struct.unpack(">BxxxL", header)
            payload = self._recv_exact(length)
            if kind == STDERR:
                self.stderr_tail = (self.stderr_tail + payload)[-4096:]
                continue
            self._pending = payload
        out, self._pending = self._pending[:max_bytes], self._pending[max_bytes:]
        return out

    def close_stdin(self) -> None:
        """Send EOF to the process (it usually exits)."""
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.close_stdin()
        with contextlib.suppress(OSError):
            self._sock.close()  # the response (and its reader) go with this object, as in docker-py
