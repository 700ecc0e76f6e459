"""A command on a terminal in the sandbox (the API's "pty"): what a person
at a shell, a REPL or a full-screen program sees and types."""
from __future__ import annotations

import queue
import threading
from typing import TYPE_CHECKING, Dict, Optional, Sequence, Union

from ._commands import CommandHandle, CommandResult, command_body

if TYPE_CHECKING:
    from ._sandbox import Sandbox


class Pty(CommandHandle):
    """A background command on a guest terminal, its stdin open:

        with sb.pty("sh", cols=100, rows=30) as term:
            term.send("stty size; exit 3\\n")
            while (out := term.read(timeout=10)):
                print(out.decode(errors="replace"), end="")
            r = term.wait()                 # CommandResult, exit_code 3

    Its output is one stream, the terminal's (stdout), with the terminal's
    own echo of what was sent and "\\r\\n" line ends.  read() takes it as it
    comes, in order and once; wait(), info() and output(offset) read the
    command's replay buffer as for any background command.  kill(),
    signal() and forget() as CommandHandle's; leaving a `with` block
    forgets the command (killing it if it still runs)."""

    def __init__(self, sandbox: "Sandbox", command_id: str) -> None:
        super().__init__(sandbox, command_id)
        self._chunks: "queue.Queue[Optional[bytes]]" = queue.Queue()
        self._reader: Optional[threading.Thread] = None
        self._ended = False
        self.result: Optional[CommandResult] = None

    def send(self, data: Union[str, bytes]) -> None:
        """Types `data` into the terminal (text as UTF-8; "\\x03" is ^C as the
        terminal reads it, "\\x04" ^D)."""
        self.send_stdin(data)

    def resize(self, cols: int, rows: int) -> None:
        """A new size: the command's foreground group gets SIGWINCH."""
        self._sb._client.json("POST", self._path + "/resize", {"cols": cols, "rows": rows})

    def read(self, timeout: Optional[float] = None) -> bytes:
        """The next output, as much as has come (waiting for some), or b""
        once the command ended and all of it was read.  timeout (seconds):
        raises TimeoutError when nothing came by then (the output is not
        lost: the next read gets it)."""
        if self._ended:
            return b""
        if self._reader is None:
            self._reader = threading.Thread(target=self._follow, daemon=True)
            self._reader.start()
        try:
            first = self._chunks.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output from the terminal in {timeout} s") from None
        data = bytearray()
        while first is not None:
            data += first
            try:
                first = self._chunks.get_nowait()
            except queue.Empty:
                return bytes(data)
        self._ended = True  # None: the follow saw the end
        return bytes(data)

    def _follow(self) -> None:
        """Follows the output from byte 0 into the queue, None at its end."""
        try:
            for kind, value in self.output(0, follow=True):
                if kind == "stdout":
                    self._chunks.put(value)  # type: ignore[arg-type]
                elif kind == "exit":
                    self.result = value  # type: ignore[assignment]
        finally:
            self._chunks.put(None)

    def __enter__(self) -> "Pty":
        return self

    def __exit__(self, *exc: object) -> None:
        self.forget()


def start_pty(sandbox: "Sandbox", cmd: Union[str, Sequence[str]], cols: int, rows: int,
              env: Optional[Dict[str, str]], cwd: Optional[str], user: Optional[str],
              timeout: Optional[int]) -> Pty:
    body = command_body(cmd, env, cwd, user, timeout, None)
    body.update(background=True, stdin_open=True, pty={"cols": cols, "rows": rows})
    rec = sandbox._client.json("POST", f"/v1/sandboxes/{sandbox.id}/commands", body, want=201)
    return Pty(sandbox, rec["id"])
