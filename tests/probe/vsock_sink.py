#!/usr/bin/env python3
"""A host program behind one vsock port for the probe's attack suite:
listens on the Unix socket PATH (airlock's --vsock-uds PATH_<port>), accepts
every connection, reads and discards what arrives, and holds each socket
until its peer closes.  Exits when its parent shell's test ends (killed)."""
import selectors
import socket
import sys

sel = selectors.DefaultSelector()
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(sys.argv[1])
srv.listen(1024)
srv.setblocking(False)
sel.register(srv, selectors.EVENT_READ)
while True:
    for key, _ in sel.select():
        if key.fileobj is srv:
            try:
                conn, _ = srv.accept()
            except BlockingIOError:
                continue
            conn.setblocking(False)
            sel.register(conn, selectors.EVENT_READ)
            continue
        try:
            data = key.fileobj.recv(65536)
        except BlockingIOError:
            continue
        except OSError:
            data = b""
        if not data:
            sel.unregister(key.fileobj)
            key.fileobj.close()
