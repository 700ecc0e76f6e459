"""Client for `airlock serve`: sandboxes (microVMs) that live for a whole
task.  Standard library only.  See docs/sandboxes.md."""
from ._client import AirlockError
from ._sandbox import CommandResult, Files, Sandbox
from ._tree import DirEntry

__all__ = ["AirlockError", "CommandResult", "DirEntry", "Files", "Sandbox"]
