"""Sandbox: one VM of `airlock serve` for a whole task."""
from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from ._client import Client, files_path
from ._commands import CommandResult, Commands, Output, collect, command_body, event_data
from ._ports import Ports
from ._pty import Pty, start_pty
from ._tree import DirEntry, entry_from_json, extract_below_top, pack_contents
from ._watch import Watch


class Files:
    """Files in and out of the sandbox: single ones (at most 64 MiB each),
    folder listings, and whole folders as tar."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def write(self, path: str, data: Union[bytes, str], mode: int = 0o644) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self._sb._client.request("PUT", files_path(self._sb.id, path, mode), raw=raw).read()

    def read(self, path: str) -> bytes:
        return self._sb._client.request("GET", files_path(self._sb.id, path)).read()

    def list(self, path: str) -> List[DirEntry]:
        """The entries of folder `path` (at most 65536), in the guest's order."""
        got = self._sb._client.json("GET", files_path(self._sb.id, path, route="directory"))
        return [entry_from_json(e) for e in got["entries"]]

    def stat(self, path: str) -> DirEntry:
        """What `path` is (a symlink is reported, not followed); its name is
        the path's last component."""
        got = self._sb._client.json("GET", files_path(self._sb.id, path, route="stat"))
        return entry_from_json(got, os.path.basename(path.rstrip("/")) or "/")

    def watch(self, path: str, recursive: bool = False) -> Watch:
        """Watches sandbox path `path` (a folder's entries, or a file;
        recursive: its subfolders' too, those made later included) and
        returns once the watch is on: iterate over the result for
        WatchEvents as they happen, close() it (or use `with`) to stop.  A
        path that does not exist raises AirlockError 404 naming it."""
        query = files_path(self._sb.id, path, route="watch")
        if recursive:
            query += "&recursive=true"
        return Watch(self._sb._client.request("GET", query), path)

    def upload_dir(self, local: str, remote: str) -> int:
        """Copies what local folder `local` holds into sandbox folder
        `remote` (made when missing), as root, modes and links kept;
        returns how many entries were written."""
        with tempfile.TemporaryFile() as spool:
            pack_contents(local, spool)
            size = spool.tell()
            spool.seek(0)
            got = self._sb._client.request(
                "PUT", files_path(self._sb.id, remote, route="archive"), raw=spool,
                raw_len=size, raw_type="application/x-tar").read()
        return int(json.loads(got)["entries"])

    def download_dir(self, remote: str, local: str) -> None:
        """Copies what sandbox folder `remote` holds into local folder
        `local` (made when missing), modes, mtimes and links kept.  Every
        member is checked before it is written (ValueError naming it when it
        would land outside `local`)."""
        resp = self._sb._client.request("GET", files_path(self._sb.id, remote, route="archive"))
        try:
            extract_below_top(resp, local)
        finally:
            resp.close()


class Sandbox:
    """A sandbox made by `airlock serve`, destroyed by close() or at the end
    of a `with` block:

        with Sandbox(image="python", allow=["pypi.org:443"], timeout=600) as sb:
            r = sb.run("python3 -c 'print(6*7)'")
            assert r.exit_code == 0 and r.stdout == "42\\n"

    secrets: credentials that never enter the VM (docs/credentials.md), e.g.
    [{"name": "OPENAI_API_KEY", "value": key, "host": "api.openai.com"}]: the
    sandbox's commands see a placeholder in $OPENAI_API_KEY, and the host
    puts the value into HTTPS requests to that host ("header", "format",
    "methods", "paths" narrow where; "source": "env:VAR" or "file:PATH" has
    the daemon read it instead of "value").

    mounts: host folders in the sandbox (docs/mounts.md), e.g.
    [{"source": "./src", "target": "/src"}, {"source": "out", "target": "/out",
    "readonly": False}]: each source's contents at its target, read-only
    unless "readonly" is False (then the guest's writes stay in the VM);
    the host folder is never changed.  A relative source is made absolute
    here; the daemon's VM process reads it, on the daemon's host.  An entry
    {"volume": "data", "target": "/data"} mounts the daemon's named volume
    instead, read-write unless "readonly" is True (docs/volumes.md).
    """

    def __init__(self, image: str = "python", *, mem: Optional[int] = None,
                 cpus: Optional[int] = None, allow: Sequence[str] = (),
                 allow_ip: Sequence[str] = (), env: Optional[Dict[str, str]] = None,
                 labels: Optional[Dict[str, str]] = None, timeout: Optional[int] = None,
                 max_lifetime: Optional[int] = None, append: Optional[str] = None,
                 snapshot: Optional[str] = None, secrets: Sequence[dict] = (),
                 ca_file: Optional[str] = None, mounts: Sequence[dict] = (),
                 ports: Sequence[object] = (), on_timeout: Optional[str] = None,
                 pause_memory: Optional[bool] = None, socket: Optional[str] = None,
                 token: Optional[str] = None,
                 _id: Optional[str] = None) -> None:
        self._client = Client(socket, token=token)
        self.files = Files(self)
        self.commands = Commands(self)
        self.ports = Ports(self)
        if _id is not None:
            self.id = _id
            self.info = self._client.json("GET", f"/v1/sandboxes/{_id}")
            return
        body: dict = {"allow": list(allow), "allow_ip": list(allow_ip),
                      "env": dict(env or {}), "labels": dict(labels or {})}
        if snapshot is not None:  # the snapshot fixed the image and the VM's shape
            body["snapshot"] = snapshot
        else:
            body["image"] = image
        if secrets:
            body["secrets"] = [dict(s) for s in secrets]
        if ports:  # {"guest_port", "host_port", "host_ip"} or "[IP:]HOST:GUEST"
            body["ports"] = [dict(p) if isinstance(p, dict) else p for p in ports]
        if mounts:
            body["mounts"] = [dict(m, source=os.path.realpath(m["source"]))
                              if isinstance(m.get("source"), str) else dict(m) for m in mounts]
        for key, value in (("mem", mem), ("cpus", cpus), ("timeout_s", timeout),
                           ("max_lifetime_s", max_lifetime), ("append", append),
                           ("ca_file", ca_file), ("on_timeout", on_timeout),
                           ("pause_memory", pause_memory)):
            if value is not None:
                body[key] = value
        self.info = self._client.json("POST", "/v1/sandboxes", body, want=201)
        self.id: str = self.info["id"]

    @classmethod
    def create(cls, template: str = "python", **kwargs: Any) -> "Sandbox":
        """Sandbox(template, ...) as E2B's SDK spells it, so code moves both ways."""
        return cls(template, **kwargs)

    @property
    def sandbox_id(self) -> str:
        """The sandbox's id, by E2B's name."""
        return self.id

    @classmethod
    def connect(cls, sandbox_id: str, socket: Optional[str] = None,
                token: Optional[str] = None) -> "Sandbox":
        """The sandbox `sandbox_id`, made earlier (by this process or another)."""
        return cls(socket=socket, token=token, _id=sandbox_id)

    @staticmethod
    def list(socket: Optional[str] = None, token: Optional[str] = None) -> List[dict]:
        return Client(socket, token=token).json("GET", "/v1/sandboxes")["sandboxes"]

    def stream(self, cmd: Union[str, Sequence[str]], *, env: Optional[Dict[str, str]] = None,
               cwd: Optional[str] = None, user: Optional[str] = None,
               timeout: Optional[int] = None, stdin: Union[str, bytes, None] = None
               ) -> Iterator[Tuple[str, object]]:
        """Runs cmd (a shell string, or argv) and yields ("stdout", bytes) and
        ("stderr", bytes) as the output comes, then ("exit", CommandResult)
        with empty stdout_bytes/stderr_bytes."""
        body = command_body(cmd, env, cwd, user, timeout, stdin)
        for event in self._client.lines("POST", f"/v1/sandboxes/{self.id}/commands", body):
            kind = event.get("type")
            if kind in ("stdout", "stderr"):
                yield kind, event_data(event)
            elif kind == "exit":
                yield "exit", CommandResult.from_event(event)

    def run(self, cmd: Union[str, Sequence[str]], *, on_stdout: Optional[Output] = None,
            on_stderr: Optional[Output] = None, **kwargs) -> CommandResult:
        """Runs cmd to its end; on_stdout/on_stderr get the output as it comes
        (decoded text).  A failing command is a result, not an exception."""
        return collect(self.stream(cmd, **kwargs), on_stdout, on_stderr)

    def pty(self, cmd: Union[str, Sequence[str]], cols: int = 80, rows: int = 24, *,
            env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
            user: Optional[str] = None, timeout: Optional[int] = None) -> Pty:
        """Starts cmd on a terminal of cols x rows in the sandbox (its stdout
        and stderr one stream, as in `airlock exec -it`): a Pty to send(),
        read(), resize(), kill() and wait() for."""
        return start_pty(self, cmd, cols, rows, env, cwd, user, timeout)

    def audit(self) -> List[dict]:
        """Its audit records (exec, exit, limit, egress), oldest first."""
        text = self._client.request("GET", f"/v1/sandboxes/{self.id}/audit").read()
        return [json.loads(line) for line in text.splitlines() if line.strip()]

    def snapshot(self) -> str:
        """Saves the sandbox as it is now (it runs on): the snapshot's id, for
        Sandbox(snapshot=...) to fork from."""
        return self._client.json("POST", f"/v1/sandboxes/{self.id}/snapshot", {}, want=201)["id"]

    def pause(self, memory: bool = True) -> None:
        """Saves the sandbox to the daemon's state folder and ends its VM; it
        keeps its id, files and background commands.  Any later call on it
        (or resume()) brings it back.  memory=False keeps its files only
        (synced first): it comes back by booting afresh, without its
        processes."""
        body = {} if memory else {"memory": False}
        self.info = self._client.json("POST", f"/v1/sandboxes/{self.id}/pause", body)

    def resume(self) -> None:
        """Restores a paused sandbox where it was paused (nothing when it runs)."""
        self.info = self._client.json("POST", f"/v1/sandboxes/{self.id}/resume", {})

    @property
    def state(self) -> str:
        """"running" or "paused", as the daemon says now."""
        self.info = self._client.json("GET", f"/v1/sandboxes/{self.id}")
        return self.info["state"]

    def set_timeout(self, seconds: int) -> None:
        """A new lease: idle `seconds` from now, the sandbox goes (0: never)."""
        self.info = self._client.json("PATCH", f"/v1/sandboxes/{self.id}", {"timeout_s": seconds})

    def update(self, *, allow: Optional[Sequence[str]] = None,
               allow_ip: Optional[Sequence[str]] = None,
               timeout: Optional[int] = None) -> dict:
        """Changes the running sandbox: `allow` / `allow_ip` each replace that
        list of its egress allowlist (None: it stays; [] empties it), and
        connections already open to what the new list does not admit are
        closed; `timeout` is a new lease, counted from now.  Returns the
        sandbox's record (also in `info`).  A rule the daemon refuses raises
        AirlockError naming the field; nothing changed then.

            sb.run("pip install requests")   # with allow=["pypi.org", ...]
            sb.update(allow=[])              # then nothing leaves
        """
        body: dict = {}
        for key, value in (("allow", allow), ("allow_ip", allow_ip)):
            if value is not None:
                if isinstance(value, str):  # a lone rule, not its characters
                    raise TypeError(f"{key}: want a list of rules, not a string")
                body[key] = list(value)
        if timeout is not None:
            body["timeout_s"] = timeout
        if not body:
            raise TypeError("update: give allow, allow_ip or timeout")
        self.info = self._client.json("PATCH", f"/v1/sandboxes/{self.id}", body)
        return self.info

    def close(self) -> None:
        """Destroys the sandbox (its VM and everything written in it)."""
        self._client.request("DELETE", f"/v1/sandboxes/{self.id}", want=204).read()

    def kill(self) -> None:
        """close(), by E2B's name."""
        self.close()

    def __enter__(self) -> "Sandbox":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
