#!/usr/bin/env python3
"""The TLS upstream for tests/boot/linux-credentials, run inside the test's
own network namespace: an HTTPS server (HTTP/1.1, keep-alive) with the
test's own CA, on each ADDR:PORT given, that records every request it gets
as a JSON line in LOG (method, path, headers, body, body_bytes; a request
whose client went away mid-body is recorded too, with "partial": true and
the body_bytes it got, without its body) and answers by path:

  /echo           200, the request's head and body as the body (Content-Length)
  /echo-chunked   200, the same, chunked in 7-byte chunks (a value spans chunks)
  /echo-header    200, the Authorization header reflected in X-Echo and
                  Set-Cookie response headers, base64 of it in X-Echo-B64
  /redirect       302 to https://other.test:8443/landing
  /gzip           200 with Content-Encoding: gzip whatever was asked
  /big?n=N        200, N bytes (benchmarks)
  anything else   200 "ok"

    upstream.py CERT KEY LOG ADDR:PORT...
Prints "ready" once all listen, then serves until killed.
"""
import base64
import gzip
import json
import socket
import ssl
import sys
import threading

cert, key, log = sys.argv[1:4]
lock = threading.Lock()


def read_request(f):
    line = f.readline()
    if not line:
        return None
    method, path, _ = line.decode("latin-1").split(" ", 2)
    headers = []
    while True:
        h = f.readline()
        if h in (b"\r\n", b""):
            break
        name, value = h.decode("latin-1").rstrip("\r\n").split(":", 1)
        headers.append((name, value.strip()))
    n = int(dict((k.lower(), v) for k, v in headers).get("content-length", "0"))
    body = b""
    while len(body) < n: # piece by piece: what came before the client left counts
        try:
            piece = f.read1(n - len(body))
        except OSError: # a TLS connection closed without close_notify
            piece = b""
        if not piece:
            break
        body += piece
    raw = line + b"".join(b"%s: %s\r\n" % (k.encode("latin-1"), v.encode("latin-1"))
                          for k, v in headers) + b"\r\n" + body
    return method, path, headers, body, raw, len(body) < n


def respond(conn, status, body, extra=()):
    head = "HTTP/1.1 %d X\r\nContent-Length: %d\r\n" % (status, len(body))
    head += "".join("%s: %s\r\n" % kv for kv in extra) + "\r\n"
    conn.sendall(head.encode("latin-1") + body)


def handle(conn):
    with conn:
        f = conn.makefile("rb")
        while True:
            try:
                req = read_request(f)
            except (OSError, ValueError):
                return
            if req is None:
                return
            method, path, headers, body, raw, partial = req
            rec = {"method": method, "path": path, "headers": headers, "body_bytes": len(body)}
            if partial:
                rec["partial"] = True
            else:
                rec["body"] = body.decode("latin-1")
            with lock, open(log, "a") as out:
                out.write(json.dumps(rec) + "\n")
            if partial: # the client went away mid-body: no answer, as for any server
                return
            auth = dict((k.lower(), v) for k, v in headers).get("authorization", "")
            route = path.split("?")[0]
            if route == "/echo":
                respond(conn, 200, raw)
            elif route == "/echo-chunked":
                out = b"HTTP/1.1 200 X\r\nTransfer-Encoding: chunked\r\n\r\n"
                for i in range(0, len(raw), 7):
                    piece = raw[i:i + 7]
                    out += b"%x\r\n%s\r\n" % (len(piece), piece)
                conn.sendall(out + b"0\r\n\r\n")
            elif route == "/echo-header":
                respond(conn, 200, b"see the headers\n",
                        [("X-Echo", auth), ("Set-Cookie", "k=" + auth),
                         ("X-Echo-B64", base64.b64encode(auth.encode()).decode())])
            elif route == "/redirect":
                respond(conn, 302, b"", [("Location", "https://other.test:8443/landing")])
            elif route == "/gzip":
                respond(conn, 200, gzip.compress(raw), [("Content-Encoding", "gzip")])
            elif path.startswith("/big?n="):
                n = int(path[7:])
                conn.sendall(b"HTTP/1.1 200 X\r\nContent-Length: %d\r\n\r\n" % n)
                chunk = b"x" * 65536
                while n:
                    conn.sendall(chunk[:min(n, len(chunk))])
                    n -= min(n, len(chunk))
            else:
                respond(conn, 200, b"ok\n")


def serve(sock, ctx):
    while True:
        c, _ = sock.accept()
        try:
            c = ctx.wrap_socket(c, server_side=True)
        except (OSError, ssl.SSLError):
            c.close()
            continue
        threading.Thread(target=handle, args=(c,), daemon=True).start()


ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
ctx.set_alpn_protocols(["http/1.1"])
# No TLS 1.3 session tickets: a client that closes without reading them
# (the broker, refusing a streamed body) would close with unread bytes,
# which is a TCP reset, and a reset drops what it had sent and we had not
# read yet: the cut-off body's length would come out short.
ctx.num_tickets = 0
for spec in sys.argv[4:]:
    addr, port = spec.rsplit(":", 1)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, int(port)))
    s.listen(64)
    threading.Thread(target=serve, args=(s, ctx), daemon=True).start()
print("ready", flush=True)
threading.Event().wait()
