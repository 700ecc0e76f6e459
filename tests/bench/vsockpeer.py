"""The guest's end of the raw-vsock rows in tests/bench/lab-vsock, and the
same Python loops over a local socketpair (to show Python is not what
limits the vsock figure: run it in the guest and where the host side runs).

  vsockpeer.py send BYTES PORT  connect to CID 2 PORT, send BYTES, half-close,
                                wait for the host to close (all arrived)
  vsockpeer.py recv PORT        listen on PORT, print "ready", read to EOF,
                                answer the byte count as a decimal line
  vsockpeer.py pair BYTES       a forked child sends BYTES over a socketpair;
                                prints "bytes=N ms=T MBps=R status=S" as
                                tests/bench/pipemeter does

1 MiB buffers, sendall from a memoryview and recv_into one, so the
interpreter does a few steps per MiB and the kernel does the rest."""
import os
import socket
import sys
import time

BUF = memoryview(bytearray(1 << 20))


def send_all(s, n):
    while n:
        k = min(n, len(BUF))
        s.sendall(BUF[:k])
        n -= k


def recv_all(s):
    got = 0
    while True:
        k = s.recv_into(BUF)
        if not k:
            return got
        got += k


def send(n, port):
    s = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    s.connect((socket.VMADDR_CID_HOST, port))
    send_all(s, n)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)


def recv(port):
    ls = socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM)
    ls.bind((socket.VMADDR_CID_ANY, port))
    ls.listen(1)
    print("ready", flush=True)
    c, _ = ls.accept()
    c.sendall(b"%d\n" % recv_all(c))
    c.close()


def pair(n):
    a, b = socket.socketpair()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        a.close()
        send_all(b, n)
        os._exit(0)
    b.close()
    got = recv_all(a)
    _, ws = os.waitpid(pid, 0)
    ms = (time.monotonic() - t0) * 1e3
    print("bytes=%d ms=%.1f MBps=%.1f status=%d" %
          (got, ms, got / 1e3 / ms if ms > 0 else 0.0, os.waitstatus_to_exitcode(ws)))


if __name__ == "__main__":
    mode, args = sys.argv[1], [int(a) for a in sys.argv[2:]]
    {"send": send, "recv": recv, "pair": pair}[mode](*args)
