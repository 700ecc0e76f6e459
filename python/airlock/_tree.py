"""Folders both ways as tar (the daemon's /archive routes): entries of a
listing, a local folder packed, and a downloaded tar extracted with every
member checked first, so none lands outside the destination whatever
tarfile's own filters do on this Python version."""
from __future__ import annotations

import base64
import os
import tarfile
from dataclasses import dataclass
from typing import IO, Optional


@dataclass
class DirEntry:
    """One entry of a sandbox folder (or a path, from stat).  mode is the
    permission bits; target is a symlink's, else None."""
    name: str
    type: str  # "file", "dir", "symlink" or "other"
    size: int
    mode: int
    mtime: int
    target: Optional[str] = None


def _text(obj: dict, key: str) -> Optional[str]:
    """obj[key], or obj[key + "_b64"] (bytes that are not UTF-8) as a str
    with surrogate escapes, as os.listdir gives such names."""
    if key in obj:
        return obj[key]
    if key + "_b64" in obj:
        return os.fsdecode(base64.b64decode(obj[key + "_b64"]))
    return None


def entry_from_json(obj: dict, name: str = "") -> DirEntry:
    return DirEntry(name=_text(obj, "name") or name, type=obj["type"], size=obj["size"],
                    mode=obj["mode"], mtime=obj["mtime"], target=_text(obj, "target"))


def pack_contents(local: str, out: IO[bytes]) -> None:
    """What folder `local` holds, as a tar (names "./...", links as links)."""
    if not os.path.isdir(local):
        raise NotADirectoryError(local)
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(local, arcname=".", recursive=True)


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def extract_below_top(src: IO[bytes], local: str) -> None:
    """Extracts a tar whose members all sit under one top member (the
    daemon names it after the folder) into `local`, the top dropped.  A
    member with an absolute name or "..", a hardlink, a device or fifo, or
    one whose folder resolves outside `local` (through a link an earlier
    member made) raises ValueError naming it; nothing is written for it."""
    os.makedirs(local, exist_ok=True)
    root = os.path.realpath(local)
    # streaming ("r|"): the answer is read once, as it arrives
    with tarfile.open(fileobj=src, mode="r|") as tf:
        for m in tf:
            parts = m.name.split("/")
            if m.name.startswith("/") or ".." in parts:
                raise ValueError(f"{m.name}: a member outside the destination")
            rest = [p for p in parts[1:] if p not in ("", ".")]
            if not rest:
                continue  # the top itself
            if not (m.isreg() or m.isdir() or m.issym()):
                raise ValueError(f"{m.name}: not a file, folder or symlink")
            dest = os.path.join(root, *rest)
            parent = os.path.realpath(os.path.dirname(dest))
            if not _inside(root, parent):
                raise ValueError(f"{m.name}: its folder leads outside the destination")
            if m.issym() and os.path.lexists(dest) and not os.path.isdir(dest):
                os.unlink(dest)
            m.name = os.path.join(*rest)
            kw = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
            # the checks above are the filter: the same on every Python version
            tf.extract(m, root, set_attrs=True, **kw)  # type: ignore[arg-type]
