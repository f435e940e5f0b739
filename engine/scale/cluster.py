"""Connecting to Ray: an existing cluster (``--ray-address`` / ``RAY_ADDRESS``) or a local one, with the
environment the workers need, and Ray's errors turned into one clear line."""

from __future__ import annotations

import os
import socket

from ..core.errors import LexprobeError

# passed to every worker, wherever it runs: offline model loading and the same caches as the driver
_ENV_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM", "HF_HOME", "LEXPROBE_HOME",
             "LEXPROBE_DATA", "LEXPROBE_CACHE")


def ray_module():
    """The ``ray`` module, or a clear error naming the extra that installs it."""
    try:
        import ray
    except ImportError:
        raise LexprobeError("--engine ray needs Ray: pip install 'lexprobe[ray]'") from None
    return ray


def connect(address: str | None = None):
    """Join the Ray cluster at ``address`` (``auto``, ``ray://host:10001``, ``host:6379``; default
    ``RAY_ADDRESS``, else a new local cluster), unless this process is connected already. Returns ``ray``."""
    ray = ray_module()
    address = address or os.environ.get("RAY_ADDRESS") or None
    _check_reachable(address)
    if ray.is_initialized():
        return ray
    env = {k: os.environ[k] for k in _ENV_VARS if k in os.environ}
    try:
        ray.init(address=address or None, include_dashboard=False, log_to_driver=False,
                 runtime_env={"env_vars": env} if env else None)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        where = address or os.environ.get("RAY_ADDRESS") or "a new local cluster"
        raise LexprobeError(f"cannot connect to Ray at {where} ({_first_line(exc)})") from None
    return ray


# HTTP/2, as every gRPC client opens: the connection preface and an empty SETTINGS frame
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
_H2_SETTINGS = 0x04


def _check_reachable(address: str | None, timeout: float = 10.0) -> None:
    """Fail within ``timeout`` seconds, with one line, when a ``HOST:PORT`` (or ``ray://HOST:PORT``) address does
    not answer as Ray does: Ray itself retries for minutes, printing its own log lines. Ray's head (its GCS) and
    its client server speak gRPC, whose first frame is HTTP/2 SETTINGS: a port that accepts but says nothing, or
    says something else (a web server, a database), is not one."""
    if not address or address in ("auto", "local"):
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise LexprobeError(f"bad Ray address {address!r}: use 'auto', 'HOST:PORT' or 'ray://HOST:PORT'")
    hint = "is it started ('ray start --head'), and is --ray-address / RAY_ADDRESS right?"
    try:
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as exc:
        raise LexprobeError(f"cannot reach the Ray cluster at {address} ({exc.strerror or exc}): {hint}") from None
    head = b""
    try:
        with sock:
            sock.settimeout(timeout)
            sock.sendall(_H2_PREFACE)
            while len(head) < 9:
                more = sock.recv(9 - len(head))
                if not more:
                    break
                head += more
    except socket.timeout:
        raise LexprobeError(f"cannot connect to Ray at {address}: the port accepts but says nothing within "
                            f"{timeout:g} s (not a Ray head or client server); {hint}") from None
    except OSError:  # reset or closed on our first bytes: not a gRPC server
        head = b""
    if len(head) < 9 or head[3] != _H2_SETTINGS:
        raise LexprobeError(f"cannot connect to Ray at {address}: the port answers, but not as Ray's gRPC server "
                            f"does (another service?); {hint}")


def get(refs):
    """``ray.get`` with a worker's error raised as itself when it is a lexprobe error (one line), else as a
    :class:`LexprobeError` naming the failure."""
    ray = ray_module()
    try:
        return ray.get(refs)
    except ray.exceptions.RayTaskError as exc:
        cause = exc.cause if getattr(exc, "cause", None) is not None else exc
        if isinstance(cause, LexprobeError):
            raise type(cause)(str(cause)) from None
        raise LexprobeError(f"a Ray worker failed: {_first_line(cause)}") from None
    except ray.exceptions.RayActorError as exc:
        raise LexprobeError(f"a Ray actor died and could not be restarted: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    lines = [l for l in str(exc).strip().splitlines() if l.strip()]
    return lines[-1].strip() if lines else type(exc).__name__
