#!/usr/bin/env python3
"""The host's half of tests/boot/linux-spare-disks: boots `airlock
sandbox-vm --spare-disks 2` with the control socket at an inherited fd,
and, step by step as the guest's console says it is ready, sends
DISK-FILL / DISK-EMPTY (and some requests the VM must refuse) with the
files as SCM_RIGHTS, the way the daemon does.  Prints one line per answer
and per finding for the shell test to check:

  spare-disks-driver.py AIRLOCK TMP
"""
import hashlib
import os
import socket
import subprocess
import sys
import time

airlock, tmp = sys.argv[1], sys.argv[2]
slow = float(os.environ.get("LAB_SLOWDOWN", "1") or 1)
console = f"{tmp}/console"
ctl, vm_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
script = ("mkdir -p /s; mount -t devtmpfs dev /dev; mount -t ext4 -o ro /dev/vdb /s; "
          "exec sh /s/t.sh")
cmd = [airlock, "sandbox-vm", "--image", "small", "--mem", "128",
       "--vsock-uds", f"{tmp}/agent.sock", "--control-fd", str(vm_end.fileno()),
       "--spare-disks", "2", "--disk", f"{tmp}/script.ext4,ro", "--console", console,
       "--append", f'idle=poll init=/bin/sh -- -c "{script}"']
vm = subprocess.Popen(cmd, pass_fds=(vm_end.fileno(),), stdout=subprocess.DEVNULL,
                      stderr=open(f"{tmp}/vm.stderr", "w"))
vm_end.close()


def say(*a):
    print(*a, flush=True)


def done(rc):
    if vm.poll() is None:
        vm.kill()
        vm.wait()
    try:
        with open(console, errors="replace") as f:
            for line in f:
                if line.startswith("T-"):
                    say("console:", line.rstrip())
    except OSError:
        pass
    with open(f"{tmp}/vm.stderr", errors="replace") as f:
        for line in f:
            say("vm-stderr:", line.rstrip())
    sys.exit(rc)


def wait_console(marker, secs):
    end = time.monotonic() + secs * slow
    while time.monotonic() < end:
        try:
            with open(console, errors="replace") as f:
                if any(line.startswith(marker) for line in f):
                    return
        except OSError:
            pass
        if vm.poll() is not None:
            say(f"vm-exited-early {vm.returncode} waiting for {marker}")
            done(1)
        time.sleep(0.1)
    say(f"timeout waiting for {marker}")
    done(1)


def request(label, text, fds=()):
    socket.send_fds(ctl, [text.encode()], list(fds))
    ctl.settimeout(60 * slow)
    try:
        ans = ctl.recv(1024).decode(errors="replace")
    except (socket.timeout, OSError) as e:
        ans = f"no answer: {e}"
    say(f"{label}: {ans}")
    return ans


def fill(label, slot, serial, image, overlay, cap=0, base_mode=os.O_RDONLY):
    base = os.open(image, base_mode)
    ovl = os.open(overlay, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        return request(label, f"DISK-FILL {slot} {serial} {cap}", (base, ovl))
    finally:
        os.close(base)  # the VM has its own copies
        os.close(ovl)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


one, two = f"{tmp}/one.ext4", f"{tmp}/two.ext4"
sum_one = sha(one)
wait_console("T-READY", 240)
# refused: each names what is wrong, and the VM goes on
fill("not-a-spare", 2, "x", one, f"{tmp}/ovl-x")
fill("bad-serial", 0, "a\x01b", one, f"{tmp}/ovl-x")
fill("base-writable", 0, "x", one, f"{tmp}/ovl-x", base_mode=os.O_RDWR)
fill("bad-cap", 0, "x", one, f"{tmp}/ovl-x", cap=100)
request("fill-no-fds", "DISK-FILL 0 x 0")
request("empty-empty", "DISK-EMPTY 0")
# the container disk
fill("fill-one", 1, "ctr-one", one, f"{tmp}/ovl-one")
fill("fill-full", 1, "ctr-again", two, f"{tmp}/ovl-x")
a, b = (os.open(f"{tmp}/snap-{n}", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600) for n in "ab")
request("snapshot-filled", "SNAPSHOT", (a, b))
os.close(a)
os.close(b)
wait_console("T-STEP1-DONE", 120)
say("base-one-unchanged:", "yes" if sha(one) == sum_one else "NO")
st = os.stat(f"{tmp}/ovl-one")
say("overlay-one-blocks:", "some" if st.st_blocks > 0 else "none")
request("empty-one", "DISK-EMPTY 1")
wait_console("T-EMPTY", 120)
fill("fill-two", 1, "ctr-two", two, f"{tmp}/ovl-two")
wait_console("T-DONE", 120)
try:
    vm.wait(timeout=60 * slow)
except subprocess.TimeoutExpired:
    pass
say("vm-exit:", vm.returncode)
done(0)
