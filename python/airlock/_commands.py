"""Background commands: started once, then read (from any offset), fed,
signalled and waited for, by this process or another (Commands.connect)."""
from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

if TYPE_CHECKING:
    from ._sandbox import Sandbox

Output = Callable[[str], None]


@dataclass
class CommandResult:
    """What a command did.  exit_code is what `airlock run` would exit with:
    the command's code, 128+N for signal N, 124 on timeout, 127 not found,
    126 cannot run."""
    exit_code: int
    stdout_bytes: bytes
    stderr_bytes: bytes
    signal: Optional[int]
    timed_out: bool
    output_truncated: bool
    duration_ms: int
    error: Optional[str]

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    @classmethod
    def from_event(cls, event: dict) -> "CommandResult":
        """From an exit record, without output (the caller adds it)."""
        return cls(exit_code=event["exit_code"], stdout_bytes=b"", stderr_bytes=b"",
                   signal=event.get("signal"), timed_out=bool(event.get("timed_out")),
                   output_truncated=bool(event.get("output_truncated")),
                   duration_ms=int(event.get("duration_ms", 0)), error=event.get("error"))


def event_data(event: dict) -> bytes:
    """The bytes of a stdout/stderr line ("data" text or "data_b64")."""
    if "data" in event:
        return event["data"].encode("utf-8")
    return base64.b64decode(event.get("data_b64", ""))


def command_body(cmd: Union[str, Sequence[str]], env: Optional[Dict[str, str]],
                 cwd: Optional[str], user: Optional[str], timeout: Optional[int],
                 stdin: Union[str, bytes, None]) -> dict:
    """The request body of a command, as the API takes it."""
    body: dict = {"cmd": cmd} if isinstance(cmd, str) else {"argv": list(cmd)}
    if env:
        body["env"] = dict(env)
    if cwd is not None:
        body["cwd"] = cwd
    if user is not None:
        body["user"] = str(user)
    if timeout is not None:
        body["timeout_s"] = timeout
    if isinstance(stdin, str):
        body["stdin"] = stdin
    elif stdin is not None:
        body["stdin_b64"] = base64.b64encode(bytes(stdin)).decode()
    return body


def collect(events: Iterator[Tuple[str, object]], on_stdout: Optional[Output],
            on_stderr: Optional[Output]) -> CommandResult:
    """Runs a stream of ("stdout"|"stderr", bytes) and ("exit", result) to
    its end: the result with all the output."""
    out, err = bytearray(), bytearray()
    result: Optional[CommandResult] = None
    for kind, value in events:
        if kind == "stdout":
            out += value  # type: ignore[operator]
            if on_stdout:
                on_stdout(value.decode("utf-8", "replace"))  # type: ignore[union-attr]
        elif kind == "stderr":
            err += value  # type: ignore[operator]
            if on_stderr:
                on_stderr(value.decode("utf-8", "replace"))  # type: ignore[union-attr]
        elif kind == "exit":
            result = value  # type: ignore[assignment]
    if result is None:
        raise ConnectionError("the daemon's stream ended without an exit record")
    result.stdout_bytes, result.stderr_bytes = bytes(out), bytes(err)
    return result


class CommandHandle:
    """A background command of a sandbox."""

    def __init__(self, sandbox: "Sandbox", command_id: str) -> None:
        self._sb = sandbox
        self.id = command_id
        self._path = f"/v1/sandboxes/{sandbox.id}/commands/{command_id}"

    def info(self) -> dict:
        """Its record: running, output_bytes, buffer_start, exit (or None)."""
        return self._sb._client.json("GET", self._path)

    def output(self, offset: int = 0, follow: bool = False) -> Iterator[Tuple[str, object]]:
        """Its output from byte `offset` (stdout and stderr counted together)
        as ("stdout"|"stderr", bytes), ("skipped", n) for bytes the buffer no
        longer holds, and ("exit", CommandResult) once it ended.  follow:
        wait for more until it ends."""
        query = f"?offset={int(offset)}" + ("&follow=true" if follow else "")
        for event in self._sb._client.lines("GET", self._path + "/output" + query, None):
            kind = event.get("type")
            if kind in ("stdout", "stderr"):
                yield kind, event_data(event)
            elif kind == "skipped":
                yield "skipped", int(event["bytes"])
            elif kind == "exit":
                yield "exit", CommandResult.from_event(event)

    def wait(self, on_stdout: Optional[Output] = None,
             on_stderr: Optional[Output] = None) -> CommandResult:
        """Waits for its end: the result, with the output the buffer still
        holds (all of it unless it overflowed)."""
        return collect(self.output(0, follow=True), on_stdout, on_stderr)

    def send_stdin(self, data: Union[str, bytes], eof: bool = False) -> None:
        """Writes to its stdin (started with stdin_open=True)."""
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        self._sb._client.request("POST", self._path + "/stdin" + ("?eof=true" if eof else ""),
                                 raw=raw).read()

    def close_stdin(self) -> None:
        self.send_stdin(b"", eof=True)

    def signal(self, sig: Union[str, int]) -> None:
        """Sends a signal ("TERM", "INT", 9, ...) to its process group."""
        self._sb._client.json("POST", self._path + "/signal", {"signal": sig})

    def kill(self) -> None:
        self.signal("KILL")

    def forget(self) -> None:
        """Drops its record (SIGKILL first when it still runs)."""
        self._sb._client.request("DELETE", self._path, want=204).read()


class Commands:
    """The commands of a sandbox: sb.commands.run(cmd, background=True)."""

    def __init__(self, sandbox: "Sandbox") -> None:
        self._sb = sandbox

    def run(self, cmd: Union[str, Sequence[str]], *, background: bool = False,
            stdin_open: bool = False, buffer_kib: Optional[int] = None,
            env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None,
            user: Optional[str] = None, timeout: Optional[int] = None,
            stdin: Union[str, bytes, None] = None, on_stdout: Optional[Output] = None,
            on_stderr: Optional[Output] = None,
            envs: Optional[Dict[str, str]] = None) -> Union[CommandResult, CommandHandle]:
        """Without background, sb.run(...).  With it: starts cmd and returns
        its handle at once.  envs is env by E2B's name."""
        if envs is not None:
            if env is not None:
                raise TypeError("run: give env or envs (E2B's name for it), not both")
            env = envs
        if not background:
            return self._sb.run(cmd, env=env, cwd=cwd, user=user, timeout=timeout, stdin=stdin,
                                on_stdout=on_stdout, on_stderr=on_stderr)
        body = command_body(cmd, env, cwd, user, timeout, stdin)
        body["background"] = True
        if stdin_open:
            body["stdin_open"] = True
        if buffer_kib is not None:
            body["buffer_kib"] = buffer_kib
        rec = self._sb._client.json("POST", f"/v1/sandboxes/{self._sb.id}/commands", body,
                                    want=201)
        return CommandHandle(self._sb, rec["id"])

    def connect(self, command_id: str) -> CommandHandle:
        """The background command `command_id` (started by anyone); a Pty
        when it runs on a terminal."""
        from ._pty import Pty  # _pty builds on this module
        handle = CommandHandle(self._sb, command_id)
        if "pty" in handle.info():  # AirlockError 404 when there is none
            return Pty(self._sb, command_id)
        return handle

    def list(self) -> List[dict]:
        return self._sb._client.json("GET", f"/v1/sandboxes/{self._sb.id}/commands")["commands"]
