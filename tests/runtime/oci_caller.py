#!/usr/bin/env python3
"""A container engine's side of an OCI runtime, as conmon and containerd's
runc shim are: a child subreaper that runs `RUNTIME create` with the
container's stdio as files, reads the pid file, `RUNTIME start`s it, waits
for that pid (its child once create has gone) and reports the exit status
the way the engines take it.  For tests/runtime/runtime-cli.

  oci_caller.py RUNTIME ROOT BUNDLE ID OUTDIR [--tty] [--no-start] [--kill SIG AFTER]

Writes OUTDIR/stdout, OUTDIR/stderr (the container's), prints
"pid N" after create and "status N" at the end (128+N for a signal, as a
shell says).  --tty: process.terminal; the pty master comes over a console
socket, everything read from it goes to OUTDIR/stdout.  --no-start: create,
print the pid, leave the container created and exit (its stand-in is then
the caller's grandchild no more: it was reparented to this process, which
leaves with it, so the test uses this only to inspect "created").
--kill SIG AFTER: `RUNTIME kill ID SIG` AFTER seconds after start.
"""
import ctypes
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

PR_SET_CHILD_SUBREAPER = 36


def main():
    rt, root, bundle, cid, outdir = sys.argv[1:6]
    opts = sys.argv[6:]
    tty = "--tty" in opts
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("cannot be a subreaper", file=sys.stderr)
        return 2
    pidfile = os.path.join(outdir, "pid")
    base = [rt, "--root", root, "--log", os.path.join(outdir, "log.json"), "--log-format", "json"]
    create = base + ["create", "--bundle", bundle, "--pid-file", pidfile]
    out = open(os.path.join(outdir, "stdout"), "wb")
    err = open(os.path.join(outdir, "stderr"), "wb")
    reader = None
    if tty:
        sock_dir = tempfile.mkdtemp()
        sock_path = os.path.join(sock_dir, "console.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(sock_path)
        srv.listen(1)
        create += ["--console-socket", sock_path]
        got = {}

        def accept():
            conn, _ = srv.accept()
            msg, fds, _, _ = socket.recv_fds(conn, 1024, 1)
            got["name"], got["fd"] = msg.decode(), fds[0]

        t = threading.Thread(target=accept)
        t.start()
    rc = subprocess.call(create + [cid], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    if rc != 0:
        print("create %d" % rc)
        return 0
    pid = int(open(pidfile).read())
    print("pid %d" % pid, flush=True)
    if tty:
        t.join(5)
        master = got.get("fd")
        if master is None:
            print("no console fd came")
            return 0

        def pump():
            while True:
                try:
                    b = os.read(master, 4096)
                except OSError:
                    return
                if not b:
                    return
                out.write(b)
                out.flush()

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
    if "--no-start" in opts:
        return 0
    t0 = time.monotonic()
    rc = subprocess.call(base + ["start", cid])
    if rc != 0:
        print("start %d" % rc)
    if "--kill" in opts:
        i = opts.index("--kill")
        time.sleep(float(opts[i + 2]))
        subprocess.call(base + ["kill", cid, opts[i + 1]])
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print("status %d" % (code if code >= 0 else 128 - code))
    print("ran %.2f s" % (time.monotonic() - t0))
    # the stand-in's own children (none should outlive it) are reaped too
    while True:
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        else:
            break
    if reader:
        reader.join(2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
