"""The web application (Flask) and its server (waitress).

Flask gives the routing, the JSON responses and an in-process test client; waitress is a pure-Python,
multi-threaded WSGI server, so the endpoints (synchronous numpy, FAISS and torch calls that release the GIL) run
side by side. Every ``/api/`` answer is JSON: a result, or ``{"error": "one clear message"}`` with status 400 (bad
input), 404 (no such index, word, dataset, relation or endpoint), 405 (not a GET) or 500 (an index that fails its
checks, or a bug; the traceback goes to the server's log, never to the client).
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from flask import Flask, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from ..core.errors import CorruptIndexError, LexprobeError
from .api import Service
from .opened import NotFound

STATIC = Path(__file__).parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765

log = logging.getLogger("lexprobe.serve")

_ROUTES = {
    "indexes": "list_indexes",
    "neighbors": "neighbors",
    "analogy": "analogy",
    "offsets": "offsets",
    "senses": "senses",
    "probe": "probe",
}


def create_app(home, *, data_places=None) -> Flask:
    """The application over the indexes under ``home`` (read-only); ``data_places``: where datasets are looked
    for (default: the data home, then ``../shared/data``)."""
    service = Service(home, data_places=data_places)
    app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")
    app.json.sort_keys = False
    app.config["lexprobe.service"] = service

    @app.get("/")
    def page():
        return send_from_directory(STATIC, "index.html")

    @app.get("/api/<endpoint>")
    def api(endpoint: str):
        method = _ROUTES.get(endpoint)
        if method is None:
            raise NotFound(f"no endpoint /api/{endpoint} (endpoints: {', '.join('/api/' + r for r in _ROUTES)})")
        return jsonify(getattr(service, method)(request.args))

    @app.errorhandler(LexprobeError)
    def lexprobe_error(exc: LexprobeError):
        if isinstance(exc, NotFound):
            status = 404
        elif isinstance(exc, CorruptIndexError):
            status = 500
        else:  # BadRequest, and the library's own checks of what the request named (a bad name, an empty blank)
            status = 400
        return jsonify(error=_one_line(str(exc))), status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        if not request.path.startswith("/api/"):
            return exc
        return jsonify(error=f"{exc.code} {exc.name}: {request.method} {request.path}"), exc.code

    @app.errorhandler(Exception)
    def internal_error(exc: Exception):
        log.exception("error answering %s", request.full_path)
        return jsonify(error=f"internal error ({type(exc).__name__}); the server's log has the details"), 500

    return app


def _one_line(message: str) -> str:
    return " ".join(message.split())


def make_server(home, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *, threads: int = 8, data_places=None):
    """A waitress server (not yet running) over ``home``; port 0 picks a free one (``server.effective_port``)."""
    from waitress.server import create_server

    app = create_app(home, data_places=data_places)
    try:
        return create_server(app, host=host, port=port, threads=threads, ident="lexprobe",
                             clear_untrusted_proxy_headers=True)
    except ValueError:  # waitress: the host does not resolve
        raise LexprobeError(f"cannot listen on {host}:{port}: not a known host or address") from None
    except OSError as exc:
        raise LexprobeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


class Running:
    """A server on a background thread, for tests and benchmarks: ``with Running(home) as url: ...``."""

    def __init__(self, home, host: str = "127.0.0.1", port: int = 0, **options):
        self.server = make_server(home, host, port, **options)
        self.thread = threading.Thread(target=self.server.run, name="lexprobe-serve", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.server.effective_host}:{self.server.effective_port}"

    def __enter__(self) -> str:
        self.thread.start()
        return self.url

    def __exit__(self, *exc) -> None:
        self.server.task_dispatcher.shutdown()                 # finish the requests being answered
        self.server.trigger.pull_trigger(self._close_sockets)  # then the loop closes every socket and ends
        self.thread.join(timeout=30)

    def _close_sockets(self) -> None:
        """Runs on the server's own loop thread (closing sockets from another thread races its select)."""
        for dispatcher in list(self.server._map.values()):
            dispatcher.close()
