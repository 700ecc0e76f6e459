#!/usr/bin/env python3
"""The guest side of tests/boot/linux-credentials: each argument is a JSON
case; the result of each is one JSON line on stdout.  "$NAME" in a URL,
header or body becomes the guest's environment variable NAME (the
placeholder the agent gave every command).

  {"name": N, "kind": "urllib", "url": U, "headers": {...}}      urllib.request
  {"name": N, "requests": [{"method", "path", "headers", "body", "pad"}...],
   "host": H, "port": P, "connect": C}
                               http.client through the proxy's CONNECT, all
                               requests on one connection (keep-alive); the
                               body after "pad" bytes of "a"; CONNECT names C
                               when given (TLS and Host still name H)
  {"name": N, "kind": "alpn", "host": H, "port": P, "alpn": [...]}
                               a TLS handshake offering only these protocols
  {"name": N, "kind": "peer", "host": H, "port": P}
                               the issuer of the certificate the guest sees
"""
import http.client
import json
import os
import re
import socket
import ssl
import sys
import urllib.request


def expand(s):
    return re.sub(r"\$([A-Z_][A-Z0-9_]*)", lambda m: os.environ.get(m.group(1), ""), s)


def tunnel(host, port):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=30)
    s.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port,
                                                                    host.encode(), port))
    head = b""
    while b"\r\n\r\n" not in head:
        b = s.recv(1)
        if not b:
            raise OSError("proxy closed")
        head += b
    if b" 200 " not in head.split(b"\r\n")[0]:
        raise OSError("proxy said " + head.split(b"\r\n")[0].decode())
    return s


def run(case):
    out = {"name": case["name"]}
    try:
        kind = case.get("kind", "requests")
        if kind == "urllib":
            req = urllib.request.Request(expand(case["url"]),
                                         headers={k: expand(v) for k, v in case.get("headers", {}).items()})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    out.update(status=r.status, body=r.read().decode("latin-1"),
                               headers=list(r.getheaders()))
            except urllib.error.HTTPError as e:
                out.update(status=e.code, body=e.read().decode("latin-1"))
        elif kind == "requests":
            ctx = ssl.create_default_context()
            port = case.get("port", 443)
            if "connect" in case:
                c = http.client.HTTPConnection(case["host"], port, timeout=30)
                c.sock = ctx.wrap_socket(tunnel(case["connect"], port),
                                         server_hostname=case["host"])
            else:
                c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx, timeout=30)
                c.set_tunnel(case["host"], port)
            out["results"] = []
            for r in case["requests"]:
                body = b"a" * r.get("pad", 0) + expand(r["body"]).encode() if "body" in r else None
                c.request(r.get("method", "GET"), expand(r["path"]), body=body,
                          headers={k: expand(v) for k, v in r.get("headers", {}).items()})
                resp = c.getresponse()
                out["results"].append({"status": resp.status, "headers": resp.getheaders(),
                                       "body": resp.read().decode("latin-1")})
            c.close()
        elif kind == "alpn":
            ctx = ssl.create_default_context()
            ctx.set_alpn_protocols(case["alpn"])
            s = ctx.wrap_socket(tunnel(case["host"], case["port"]), server_hostname=case["host"])
            out["alpn"] = s.selected_alpn_protocol()
            s.close()
        elif kind == "peer":
            ctx = ssl.create_default_context()
            s = ctx.wrap_socket(tunnel(case["host"], case["port"]), server_hostname=case["host"])
            issuer = dict(x[0] for x in s.getpeercert()["issuer"])
            out["issuer"] = issuer.get("commonName", "")
            s.close()
    except Exception as e:  # reported, not raised: the next case still runs
        out["error"] = "%s: %s" % (type(e).__name__, e)
    return out


for arg in sys.argv[1:]:
    print(json.dumps(run(json.loads(arg))), flush=True)
