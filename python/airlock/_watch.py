"""File watches (the daemon's /watch route): a sandbox path's changes as
they happen, one event per JSON line."""
from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from typing import Iterator, Optional

from ._tree import _text


@dataclass
class WatchEvent:
    """One change in a watched path.  type is "create", "write", "remove",
    "rename", "chmod" (any attribute: mode, owner, times, link count) or
    "overflow" (events were lost there: the sandbox or the daemon could not
    keep them while the reader was slow; path, when given, is a folder whose
    events are lost).  A rename's `to` is where it went when that is inside
    the watch (then no create follows for it), else None.  dir: the entry
    is a folder."""
    type: str
    path: Optional[str] = None
    dir: bool = False
    to: Optional[str] = None


def event_from_json(obj: dict) -> WatchEvent:
    return WatchEvent(type=obj["type"], path=_text(obj, "path"), dir=bool(obj.get("dir")),
                      to=_text(obj, "to"))


class Watch:
    """A watch that is on: iterate over it for WatchEvents as they come.
    Iteration ends when the path is removed or moved away (its event is
    the last).  close() (or the end of a `with` block) hangs up, and the
    watch in the sandbox ends with the connection."""

    def __init__(self, resp: http.client.HTTPResponse, path: str) -> None:
        self._resp = resp
        self._root = path.rstrip("/") or "/"
        self._ended = False  # the path's own removal or move came: a clean end

    def __iter__(self) -> Iterator[WatchEvent]:
        return self

    def __next__(self) -> WatchEvent:
        try:
            line = self._resp.readline()
        except (http.client.IncompleteRead, ValueError):
            self.close()
            raise ConnectionError("the watch broke off: the sandbox's agent was lost "
                                  "(was the sandbox deleted?)") from None
        if not line:
            self.close()
            if self._ended:
                raise StopIteration
            # The daemon's stream stopped short of the path's end (which it
            # never drops): cut, not finished.
            raise ConnectionError("the watch broke off: the sandbox's agent was lost "
                                  "(was the sandbox deleted?)")
        event = event_from_json(json.loads(line))
        self._ended = event.type in ("remove", "rename") and event.path == self._root
        return event

    def close(self) -> None:
        self._resp.close()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
