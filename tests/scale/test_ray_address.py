"""``--ray-address``: a port that accepts but is not Ray (silent, or another service) is one
line within a bounded time, before Ray is started (Ray itself retries for minutes and prints its own log lines).
Fake servers run on loopback, started by the tests."""

from __future__ import annotations

import json
import socket
import threading

import pytest

from lexprobe.core.errors import LexprobeError
from lexprobe.scale.cluster import _check_reachable


class _Fake:
    """A loopback server that accepts connections and answers each with ``reply`` (None: says nothing; empty:
    closes the connection at once)."""

    def __init__(self, reply: bytes | None):
        self.reply = reply
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.sock.getsockname()[1]}"
        self.open: list[socket.socket] = []
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.open.append(conn)
            if self.reply == b"":
                conn.close()
            elif self.reply is not None:
                conn.sendall(self.reply)

    def __enter__(self) -> str:
        self.thread.start()
        return self.address

    def __exit__(self, *exc):
        self.sock.close()
        for conn in self.open:
            conn.close()


SETTINGS = b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"  # an empty HTTP/2 SETTINGS frame: what a gRPC server sends first


def test_a_silent_port_is_one_line_within_the_timeout():
    with _Fake(None) as address:
        with pytest.raises(LexprobeError, match=r"accepts but says nothing within 1 s"):
            _check_reachable(address, timeout=1)


@pytest.mark.parametrize("reply", [b"HTTP/1.1 400 Bad Request\r\n\r\n", b"-ERR unknown command\r\n", b""])
def test_another_service_is_one_line(reply):
    with _Fake(reply) as address:
        with pytest.raises(LexprobeError, match=r"not as Ray's gRPC server"):
            _check_reachable(address, timeout=5)


def test_a_grpc_server_passes_the_check():
    with _Fake(SETTINGS) as address:
        _check_reachable(address, timeout=5)
        _check_reachable("ray://" + address, timeout=5)


def test_the_cli_says_one_line_and_prints_no_ray_log(cli, tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"text": "the river bank", "targets": [{"position": 2, "sense": "bank%1:17:01::",
                                                                          "lemma": "bank", "pos": "NOUN"}]}) + "\n")
    with _Fake(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n") as address:
        r = cli("--home", tmp_path / "home", "index", "tokens", "--corpus", f"jsonl:{corpus}", "--name", "t",
                "--engine", "ray", "--ray-address", address)
    assert r.code == 2, r
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot connect to Ray at {address}"), r
