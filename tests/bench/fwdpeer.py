"""Both ends of tests/bench/lab-forward: a TCP server (in the guest behind
`airlock run -p`, or in L1 on loopback for the baseline) and the client
that times it.

  fwdpeer.py serve PORT [VPORT]  serve 127.0.0.1:PORT (and the guest's vsock
                                port VPORT: the same requests straight over
                                vsock), a thread per connection, until a
                                "quit" request; each connection starts with
                                a one-line request:
                                  sink       read to EOF, answer the count
                                  source N   send N bytes, close
                                  ping       "p" for each "ping\n" until EOF
                                  local N R  R runs of this server's own sink
                                             over loopback, N bytes each;
                                             answers their MB/s, spaces apart
                                  quit       exit
  fwdpeer.py wait TARGET SECS   until a ping through TARGET is answered
  fwdpeer.py up TARGET BYTES    BYTES to a sink: MB/s, from the request's
                                first byte to the count's arrival
  fwdpeer.py down TARGET BYTES  BYTES from a source: MB/s, from the request
                                to EOF
  fwdpeer.py connect TARGET N   N new connections, one after another, each
                                timed from the start of the connect to the
                                first byte of the ping's answer: N lines of ms
  fwdpeer.py rtt TARGET N       N ping round trips on one connection: ms
  fwdpeer.py local TARGET N R   asks the server for its own loopback figures
  fwdpeer.py pair BYTES         BYTES through a socketpair to a thread: MB/s
  fwdpeer.py quit TARGET

TARGET is one of
  tcp:PORT            127.0.0.1:PORT (a published port, or L1's own server)
  vsock:UDS:VPORT     airlock run --vsock-uds UDS, "CONNECT VPORT": the
                      guest server's vsock listener, no relay
  relay:UDS:PORT      the same socket, "CONNECT 1025" and the forward's
                      hello for the guest's TCP PORT (proto.h, "Inbound
                      forwards"): the agent's relay without airlock's
                      forwarder and L1's TCP

1 MiB buffers, sendall from a memoryview and recv_into one, as
tests/bench/vsockpeer.py: the interpreter does a few steps per MiB and the
kernel does the rest.  Figures only: nothing asserts on them."""
import socket
import struct
import sys
import threading
import time

BUF = 1 << 20
ZEROS = memoryview(bytearray(BUF))


def send_all(s, n):
    while n:
        k = min(n, BUF)
        s.sendall(ZEROS[:k])
        n -= k


def recv_all(s):
    buf = memoryview(bytearray(BUF))
    got = 0
    while True:
        k = s.recv_into(buf)
        if not k:
            return got
        got += k


def read_line(s):
    line = b""
    while not line.endswith(b"\n"):
        b = s.recv(1)
        if not b:
            break
        line += b
    return line.decode().split()


def uds_connect(path, vport):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(b"CONNECT %d\n" % vport)
    if not " ".join(read_line(s)).startswith("OK"):
        raise OSError("CONNECT %d refused" % vport)
    return s


def dial(target):
    t = str(target)
    kind, rest = t.split(":", 1) if ":" in t else ("tcp", t)
    if kind == "tcp":
        s = socket.create_connection(("127.0.0.1", int(rest)))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s
    path, port = rest.rsplit(":", 1)
    if kind == "vsock":
        return uds_connect(path, int(port))
    s = uds_connect(path, 1025)
    s.sendall(struct.pack("<IHH", 0x44574641, int(port), 0))
    reply = b""
    while len(reply) < 4:
        b = s.recv(4 - len(reply))
        if not b:
            raise OSError("the agent closed the forward")
        reply += b
    err = struct.unpack("<I", reply)[0]
    if err:
        raise OSError(err, "the guest's connect failed")
    return s


def mbps(n, secs):
    return "%.1f" % (n / 1e6 / secs) if secs > 0 else "-"


# ---- the server --------------------------------------------------------

def up(port, n):
    s = dial(port)
    t0 = time.monotonic()
    s.sendall(b"sink\n")
    send_all(s, n)
    s.shutdown(socket.SHUT_WR)
    got = int(read_line(s)[0])
    secs = time.monotonic() - t0
    s.close()
    return got, secs


def handle(c, port, stop):
    with c:
        req = read_line(c)
        if not req:
            return
        if req[0] == "sink":
            c.sendall(b"%d\n" % recv_all(c))
        elif req[0] == "source":
            send_all(c, int(req[1]))
        elif req[0] == "ping":
            c.sendall(b"p")
            while read_line(c):
                c.sendall(b"p")
        elif req[0] == "local":
            n, runs = int(req[1]), int(req[2])
            out = []
            for _ in range(runs):
                got, secs = up(port, n)
                out.append(mbps(got, secs) if got == n else "-")
            c.sendall((" ".join(out) + "\n").encode())
        elif req[0] == "quit":
            stop.set()


def accept_loop(ls, port, stop):
    ls.settimeout(0.5)
    while not stop.is_set():
        try:
            c, _ = ls.accept()
        except socket.timeout:
            continue
        c.settimeout(None)
        if c.family != socket.AF_VSOCK:
            c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=handle, args=(c, port, stop), daemon=True).start()


def serve(port, vport=0):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(128)
    stop = threading.Event()
    if vport:
        vs = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
        vs.bind((socket.VMADDR_CID_ANY, vport))
        vs.listen(128)
        threading.Thread(target=accept_loop, args=(vs, port, stop), daemon=True).start()
    print("ready", flush=True)
    accept_loop(ls, port, stop)


# ---- the client --------------------------------------------------------

def wait(port, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        try:
            s = dial(port)
            s.sendall(b"ping\n")
            if s.recv(1) == b"p":
                s.close()
                print("up")
                return
            s.close()
        except OSError:
            pass
        time.sleep(0.5)
    print("no answer from %s in %d s" % (port, secs))
    sys.exit(1)


def client_up(port, n):
    got, secs = up(port, n)
    print(mbps(got, secs) if got == n else "short:%d" % got)


def client_down(port, n):
    s = dial(port)
    t0 = time.monotonic()
    s.sendall(b"source %d\n" % n)
    got = recv_all(s)
    secs = time.monotonic() - t0
    print(mbps(got, secs) if got == n else "short:%d" % got)


def connect(port, n):
    for _ in range(n):
        t0 = time.monotonic()
        s = dial(port)
        s.sendall(b"ping\n")
        first = s.recv(1)
        ms = (time.monotonic() - t0) * 1e3
        s.close()
        print("%.3f" % ms if first == b"p" else "failed")


def rtt(port, n):
    s = dial(port)
    s.sendall(b"ping\n")
    s.recv(1)
    for _ in range(n):
        t0 = time.monotonic()
        s.sendall(b"ping\n")
        first = s.recv(1)
        print("%.3f" % ((time.monotonic() - t0) * 1e3) if first == b"p" else "failed")
    s.close()


def local(port, n, runs):
    s = dial(port)
    s.sendall(b"local %d %d\n" % (n, runs))
    print(" ".join(read_line(s)))


def pair(n):
    a, b = socket.socketpair()
    t0 = time.monotonic()
    t = threading.Thread(target=lambda: (send_all(b, n), b.close()))
    t.start()
    got = recv_all(a)
    t.join()
    print(mbps(got, time.monotonic() - t0) if got == n else "short:%d" % got)


def quit_(port):
    s = dial(port)
    s.sendall(b"quit\n")
    s.close()


if __name__ == "__main__":
    mode = sys.argv[1]
    args = [a if ":" in a else int(a) for a in sys.argv[2:]]
    {"serve": serve, "wait": wait, "up": client_up, "down": client_down, "connect": connect,
     "rtt": rtt, "local": local, "pair": pair, "quit": quit_}[mode](*args)
