#!/usr/bin/env python3
"""Servers for tests/boot/linux-egress, run inside the network namespace the
test creates: an echo server (echoes every byte, passes the half-close on)
and a tiny HTTP server, on each ADDR:PORT given.  Prints "ready" once all
listen, then serves until killed.

    servers.py echo:1.2.3.4:4443 http:1.2.3.4:8080 ...
"""
import socket
import sys
import threading


def echo(conn):
    with conn:
        while True:
            b = conn.recv(65536)
            if not b:
                conn.shutdown(socket.SHUT_WR)
                return
            conn.sendall(b)


def http(conn):
    with conn:
        head = b""
        while b"\r\n\r\n" not in head:
            b = conn.recv(4096)
            if not b:
                return
            head += b
        line = head.split(b"\r\n")[0].decode("latin-1")
        body = ("hello from the origin; you asked: %s\n" % line).encode()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                     % (len(body), body))


def serve(sock, handler):
    while True:
        conn, _ = sock.accept()
        threading.Thread(target=handler, args=(conn,), daemon=True).start()


for spec in sys.argv[1:]:
    kind, addr, port = spec.split(":")
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(64)
    threading.Thread(target=serve, args=(s, echo if kind == "echo" else http), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
