"""The web application (Flask) and its server (waitress).

Flask gives the routing, the JSON responses and an in-process test client; waitress is a pure-Python,
multi-threaded WSGI server, so the endpoints (synchronous numpy, FAISS and torch calls that release the GIL) run
side by side. Every answer that is not the page or a CSV file (``format=csv``: an answer's table) is JSON: a
result (``/api/openapi.json``: the OpenAPI document of them all), or ``{"error": "one clear message"}`` with
status 400 (bad input, or a Host that is not the server's), 403 (a cross-site request), 404 (no such index, word,
dataset, relation or endpoint), 405 (not a GET), 503 with ``Retry-After`` (every t-SNE/UMAP slot taken:
:data:`.projection.GATE`) or 500 (an index that fails its checks, or a bug; the traceback goes to the server's
log, never to the client). No message holds an absolute path. A CSV cell that a spreadsheet would run as a formula
(starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return) is written after a single quote, as OWASP
advises against CSV injection.

The server answers only requests addressed to it: the ``Host`` header must name it (``127.0.0.1``,
``localhost``, ``[::1]``, the ``--host`` it listens on, or an ``--allow-host`` name) with its port. A web page on
another site whose name an attacker points at 127.0.0.1 (DNS rebinding) sends its own name, and is refused. A
request a browser marks as sent from another site (``Sec-Fetch-Site: cross-site``), or whose ``Origin`` is not this
server, is refused too (403): any web page the user visits could otherwise keep the threads busy.
Connections idle for ``idle_timeout`` seconds are closed, so idle clients cannot hold every connection.
"""

from __future__ import annotations

import csv
import io
import json
import logging
import re
import threading
from pathlib import Path

from flask import Flask, Response, jsonify, request, send_from_directory
from werkzeug.exceptions import HTTPException

from ..core.errors import CorruptIndexError, LexprobeError
from . import IDLE_TIMEOUT
from ..core.version import __version__
from .api import ENDPOINT, BadRequest, Endpoint, Service, choice, openapi, table_rows
from .opened import NotFound
from .projection import Busy

STATIC = Path(__file__).parent / "static"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
DEFAULT_PORT = 8765
MAX_REQUEST_LINE = 1 << 20  # bytes of request line and headers: a 1000-word list, percent-encoded, fits

log = logging.getLogger("lexprobe.serve")

def host_names(host: str = "127.0.0.1", allow: tuple[str, ...] = ()) -> set[str]:
    """The names a ``Host`` header may give for a server listening on ``host`` (IPv6 addresses bracketed)."""
    names = set()
    for name in (*LOOPBACK, host, *allow):
        name = name.strip().lower()
        if name:
            names.add(f"[{name}]" if ":" in name and not name.startswith("[") else name)
    return names


def _host_ok(header: str, names: set[str], port: int | None) -> bool:
    """Whether a ``Host`` header names this server: one of ``names``, with ``port`` (None: any port, for the
    in-process client; the default port of HTTP may be left out)."""
    header = header.strip().lower()
    name, sep, given = header.rpartition(":") if not header.endswith("]") else (header, "", "")
    if not sep:
        name, given = header, ""
    if name not in names:
        return False
    if port is None:
        return not given or given.isdigit()
    return given == str(port) or (not given and port == 80)


def create_app(home, *, data_places=None, models=None, hosts: set[str] | None = None, port: int | None = None) \
        -> Flask:
    """The application over the indexes under ``home`` (read-only); ``data_places``: where datasets are looked
    for (default: the data home, then ``../shared/data``); ``models``: the masked LMs ``/api/probe`` may run
    (default: the default one); ``hosts``/``port``: what a request's ``Host`` must name (default: the loopback
    names, any port; :func:`make_server` sets its own)."""
    service = Service(home, data_places=data_places, **({} if models is None else {"models": models}))
    app = Flask(__name__, static_folder=str(STATIC), static_url_path="/static")
    app.json.sort_keys = False
    app.config["lexprobe.service"] = service
    app.config["lexprobe.hosts"] = (host_names() if hosts is None else hosts, port)

    @app.before_request
    def own_host_only():
        names, own_port = app.config["lexprobe.hosts"]
        header = request.headers.get("Host", "")
        if not _host_ok(header, names, own_port):
            where = f"{sorted(names)[0]}:{own_port}" if own_port else sorted(names)[0]
            return jsonify(error=f"this server answers requests for its own address only (Host "
                                 f"{_one_line(header)[:80]!r} is not it; use http://{where}/)"), 400
        origin = request.headers.get("Origin")
        if request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site" or \
                (origin is not None and not _origin_ok(origin, names, own_port)):
            return jsonify(error="this server answers its own page only, not requests sent from another site "
                                 f"(Origin {_one_line(origin or '')[:80]!r}, Sec-Fetch-Site "
                                 f"{_one_line(request.headers.get('Sec-Fetch-Site', ''))[:20]!r})"), 403
        return None

    @app.get("/")
    def page():
        return send_from_directory(STATIC, "index.html")

    @app.get("/api/openapi.json")
    def openapi_document():
        return jsonify(openapi(__version__))

    @app.get("/api/<endpoint>")
    def api(endpoint: str):
        found = ENDPOINT.get(endpoint)
        if found is None:
            raise NotFound(f"no endpoint /api/{endpoint} (endpoints: {', '.join('/api/' + e for e in ENDPOINT)}, "
                           f"/api/openapi.json)")
        repeated = [name for name in request.args if len(request.args.getlist(name)) > 1]
        if repeated:
            raise BadRequest(f"parameter {repeated[0][:80]!r} is given more than once")
        as_csv = choice(request.args, "format", ("json", "csv"), "json") == "csv"
        answer = getattr(service, found.method)(request.args)
        return csv_response(found, answer) if as_csv else jsonify(answer)

    @app.errorhandler(LexprobeError)
    def lexprobe_error(exc: LexprobeError):
        if isinstance(exc, Busy):
            return jsonify(error=_one_line(str(exc))), 503, {"Retry-After": str(exc.retry_after)}
        if isinstance(exc, NotFound):
            status = 404
        elif isinstance(exc, CorruptIndexError):
            status = 500
        else:  # BadRequest, and the library's own checks of what the request named (a bad name, an empty blank)
            status = 400
        return jsonify(error=service.public(_one_line(str(exc)))), status

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):
        return jsonify(error=f"{exc.code} {exc.name}: {request.method} {_one_line(request.path)[:200]}"), exc.code

    @app.errorhandler(Exception)
    def internal_error(exc: Exception):
        log.exception("error answering %s", request.full_path)
        return jsonify(error=f"internal error ({type(exc).__name__}); the server's log has the details"), 500

    return app


def csv_response(endpoint: Endpoint, answer: dict) -> Response:
    """An answer's rows as a CSV file (:func:`~.api.table_rows`): a header row, then one line per row with the
    JSON's values (numbers as JSON writes them, true/false, empty for null), named after the endpoint and the
    index or model asked about."""
    columns, rows = table_rows(endpoint, answer)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([csv_value(row.get(c)) for c in columns])
    about = answer.get("index") or answer.get("model") or ""
    view = answer.get("view", "")
    parts = ("lexprobe", endpoint.path, about, view)
    name = "-".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", part) for part in parts if part)  # an ASCII header
    return Response(out.getvalue(), mimetype="text/csv",
                    headers={"Content-Disposition": f'attachment; filename="{name}.csv"'})


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet read a cell as a formula (OWASP)


def csv_value(value) -> str:
    """A JSON value as a CSV cell: null empty, booleans true/false, numbers as JSON writes them; a text starting
    as a formula would (:data:`FORMULA_STARTS`) after a single quote, so a spreadsheet shows it and runs nothing."""
    if value is None:
        return ""
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    return json.dumps(value)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _origin_ok(origin: str, names: set[str], port: int | None) -> bool:
    """Whether an ``Origin`` header (``scheme://host[:port]``) is this server (``null`` and other schemes are not)."""
    scheme, sep, rest = origin.strip().partition("://")
    return bool(sep) and scheme.lower() in ("http", "https") and "/" not in rest and _host_ok(rest, names, port)


def make_server(home, host: str = "127.0.0.1", port: int = DEFAULT_PORT, *, threads: int = 8, data_places=None,
                models=None, allow_hosts: tuple[str, ...] = (), idle_timeout: int = IDLE_TIMEOUT,
                preload: bool = False, warm: bool = True):
    """A waitress server (not yet running) over ``home``; port 0 picks a free one (``server.effective_port``).
    It answers requests whose ``Host`` names it (:func:`host_names`, ``allow_hosts`` added) with its port, and
    closes connections idle for ``idle_timeout`` seconds; ``preload`` loads the served models first
    (:meth:`~.api.Service.preload`); ``warm`` compiles or loads the search kernels and opens the words indexes
    first (:meth:`~.api.Service.warm`; what it did is ``server.app.config["lexprobe.warm"]``)."""
    from waitress.server import create_server

    app = create_app(home, data_places=data_places, models=models)
    try:
        server = create_server(app, host=host, port=port, threads=threads, ident="lexprobe",
                               max_request_header_size=MAX_REQUEST_LINE,
                               clear_untrusted_proxy_headers=True, channel_timeout=idle_timeout,
                               cleanup_interval=max(1, min(idle_timeout, 30) // 2))
    except ValueError:  # waitress: the host does not resolve
        raise LexprobeError(f"cannot listen on {host}:{port}: not a known host or address") from None
    except OSError as exc:
        raise LexprobeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    app.config["lexprobe.hosts"] = (host_names(host, tuple(allow_hosts)), server.effective_port)
    server.app = app  # waitress wraps the application it serves; this is the Flask one
    try:
        if preload:
            app.config["lexprobe.service"].preload()
        app.config["lexprobe.warm"] = app.config["lexprobe.service"].warm() if warm else None
    except BaseException:
        server.close()
        raise
    return server


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
