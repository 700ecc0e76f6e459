"""HTTP/1.1 + JSON to `airlock serve` over its Unix socket (http.client
does the protocol, chunked streams included; this only connects)."""
from __future__ import annotations

import http.client
import json
import os
import socket
from typing import Any, Iterator, Optional, Sequence
from urllib.parse import quote, urlencode, urlsplit


class AirlockError(Exception):
    """The daemon refused a request (status, message, and the field to blame
    when there is one), or could not be reached (status 0)."""

    def __init__(self, status: int, message: str, field: Optional[str] = None) -> None:
        super().__init__(f"{message} (field {field})" if field else message)
        self.status = status
        self.message = message
        self.field = field


def default_socket(given: Optional[str] = None) -> str:
    """`given`, else $AIRLOCK_SOCKET, else the daemon's default for this user."""
    if given:
        return given
    env = os.environ.get("AIRLOCK_SOCKET")
    if env:
        return env
    if os.geteuid() == 0:
        return "/run/airlock/airlock.sock"
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg:
        return os.path.join(xdg, "airlock.sock")
    raise AirlockError(0, "no daemon socket: pass socket= or set AIRLOCK_SOCKET "
                          "(XDG_RUNTIME_DIR is not set either)")


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: Optional[float]) -> None:
        super().__init__("airlock", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(self._path)
        except OSError as e:
            s.close()
            raise AirlockError(0, f"no daemon at {self._path} ({e.strerror}): "
                                  "start one with `airlock serve`") from None
        self.sock = s


class Client:
    """One daemon: its Unix socket, or "http://IP:PORT" (`airlock serve
    --listen`) with its bearer token (token=, else $AIRLOCK_TOKEN).  Each
    request is its own connection (streams can be long)."""

    def __init__(self, socket_path: Optional[str] = None, timeout: Optional[float] = None,
                 token: Optional[str] = None):
        self.socket_path = default_socket(socket_path)
        self.timeout = timeout
        self.token = token if token is not None else os.environ.get("AIRLOCK_TOKEN")

    def _connect(self) -> http.client.HTTPConnection:
        if not self.socket_path.startswith("http://"):
            return _UnixConnection(self.socket_path, self.timeout)
        url = urlsplit(self.socket_path)
        if not url.hostname or url.path not in ("", "/"):
            raise AirlockError(0, f"{self.socket_path}: want http://IP:PORT")
        return http.client.HTTPConnection(url.hostname, url.port or 80, timeout=self.timeout)

    def request(self, method: str, path: str, body: Any = None, raw: Any = None,
                want: int = 200, raw_len: Optional[int] = None,
                raw_type: str = "application/octet-stream") -> http.client.HTTPResponse:
        """raw: bytes, or a file object of raw_len bytes (sent as it is read)."""
        conn = self._connect()
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers = {"Content-Type": "application/json" if raw is None else raw_type}
        if raw_len is not None:
            headers["Content-Length"] = str(raw_len)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request(method, path, body=data, headers=headers)
        except OSError as e:
            conn.close()
            raise AirlockError(0, f"no daemon at {self.socket_path} ({e.strerror or e})") from None
        resp = conn.getresponse()
        if resp.status != want:
            text = resp.read()
            conn.close()
            try:
                err = json.loads(text)
            except ValueError:
                err = {}
            raise AirlockError(resp.status, err.get("error", f"the daemon answered {resp.status}"),
                               err.get("field"))
        return resp

    def json(self, method: str, path: str, body: Any = None, want: int = 200) -> Any:
        resp = self.request(method, path, body, want=want)
        text = resp.read()
        return json.loads(text) if text.strip() else None

    def lines(self, method: str, path: str, body: Any) -> Iterator[dict]:
        yield from _json_lines(self.request(method, path, body))

    def metrics(self) -> str:
        """GET /v1/metrics: the daemon's metrics in Prometheus's text format."""
        return self.request("GET", "/v1/metrics").read().decode()

    def events(self, types: Optional[Sequence[str]] = None,
               sandbox: Optional[str] = None) -> Iterator[dict]:
        """GET /v1/events: each lifecycle event as it happens, a dict with
        "type", "id" and "time" (an "overflow" one counts events lost while
        this reader was slow); only those types, or that sandbox's, when
        given.  Subscribed when this returns (a bad filter raises
        AirlockError naming it); runs until the caller stops iterating and
        closes the iterator (then it hangs up)."""
        query = {}
        if types:
            query["type"] = ",".join(types)
        if sandbox:
            query["sandbox"] = sandbox
        return _json_lines(self.request("GET", "/v1/events" +
                                        (f"?{urlencode(query)}" if query else "")))


def _json_lines(resp: http.client.HTTPResponse) -> Iterator[dict]:
    try:
        while True:
            line = resp.readline()
            if not line:
                return
            yield json.loads(line)
    finally:
        resp.close()


def files_path(sandbox_id: str, path: str, mode: Optional[int] = None,
               route: str = "files") -> str:
    """/v1/sandboxes/ID/ROUTE?path=PATH (files, directory, stat, archive, watch)."""
    q = f"/v1/sandboxes/{sandbox_id}/{route}?path={quote(path, safe='')}"
    return q + (f"&mode={mode:o}" if mode is not None else "")
