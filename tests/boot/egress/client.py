#!/usr/bin/env python3
"""The guest side of tests/boot/linux-egress: each argument is one case, and
each prints one line the test asserts on.

    echo:HOST:PORT    CONNECT through the proxy, then 10 MiB both ways
                      -> "echo HOST:PORT <status> intact|corrupt N"
    ask:HOST:PORT     CONNECT only -> "ask HOST:PORT <status> <reason line>"
    http:URL          urllib with the proxy from the environment
                      -> "http URL <status> <first body line>"
    raw:IP:PORT       a direct connect(), no proxy -> "raw IP:PORT <errno name>"
    hold:N:HOST:PORT  N CONNECTs held open at once -> "hold <status>,<status>,..."
    wait:HOST:PORT    CONNECT, a line echoed, then "wait HOST:PORT open" at once;
                      then the tunnel is left alone until it ends (at most 600 s)
                      -> "wait HOST:PORT closed|still open|<status>"
"""
import errno
import os
import socket
import sys
import threading
import urllib.error
import urllib.request

PROXY = ("127.0.0.1", 3128)


def connect(target):
    s = socket.create_connection(PROXY, timeout=60)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            break
        head += b
    status = int(head.split()[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return s, status


def body_of(s):
    got = b""
    while True:
        b = s.recv(4096)
        if not b:
            return got
        got += b


def echo(target):
    s, status = connect(target)
    if status != 200:
        return "%d" % status
    data = os.urandom(10 << 20)

    def send():
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=send)
    t.start()
    got = bytearray()
    while True:
        b = s.recv(1 << 16)
        if not b:
            break
        got += b
    t.join()
    return "200 " + ("intact" if got == data else "corrupt %d" % len(got))


def ask(target):
    s, status = connect(target)
    reason = body_of(s).decode("latin-1").strip() if status != 200 else ""
    return "%d %s" % (status, reason)


def http(url):
    try:
        with urllib.request.urlopen(url, timeout=60) as r:
            return "%d %s" % (r.status, r.read().decode().splitlines()[0])
    except urllib.error.HTTPError as e:
        return "%d %s" % (e.code, e.read().decode().strip())


def raw(target):
    host, port = target.rsplit(":", 1)
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
        return "CONNECTED"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def hold(arg):
    n, target = arg.split(":", 1)
    socks = [connect(target) for _ in range(int(n))]
    return ",".join(str(st) for _, st in socks)


def wait(target):
    s, status = connect(target)
    if status != 200:
        return "%d" % status
    s.sendall(b"ping\n")
    got = b""
    while len(got) < 5:
        b = s.recv(5 - len(got))
        if not b:
            return "closed before the echo"
        got += b
    print("wait", target, "open", flush=True)
    s.settimeout(600)
    try:
        return "closed" if not s.recv(1) else "got bytes"
    except socket.timeout:
        return "still open"
    except OSError as e:  # a reset is a close too, but say which
        return "closed (%s)" % errno.errorcode.get(e.errno, str(e.errno))


for case in sys.argv[1:]:
    kind, arg = case.split(":", 1)
    handler = {"echo": echo, "ask": ask, "http": http, "raw": raw, "hold": hold,
               "wait": wait}[kind]
    print(kind, arg, handler(arg), flush=True)
