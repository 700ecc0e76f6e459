"""Client for `airlock serve`: sandboxes (microVMs) that live for a whole
task.  Standard library only.  See docs/sandboxes.md."""
from ._client import AirlockError, Client
from ._commands import CommandHandle, CommandResult, Commands
from ._pty import Pty
from ._sandbox import Files, Sandbox
from ._tree import DirEntry
from ._watch import Watch, WatchEvent

__all__ = ["AirlockError", "Client", "CommandHandle", "CommandResult", "Commands", "DirEntry", "Files",
           "Pty", "Sandbox", "Watch", "WatchEvent"]
