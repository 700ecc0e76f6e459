#!/usr/bin/env python3
"""Searches the memory of an airlock run and its children for a byte
string, through /proc/PID/mem (root): every readable mapping, guest RAM
included (the VM process maps it).  One line per process:

    KIND PID found N in M MiB

KIND: "parent" for PID itself (airlock's waiting parent), "broker" for the
egress broker (comm airlock-broker), "vm" for any other descendant (the
VM process, and a helper if one runs); "gone PID" for one that ended
before it could be read.

    memscan.py PID NEEDLE
"""
import os
import sys

root, needle = int(sys.argv[1]), sys.argv[2].encode()


def children():
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree(pid, kids):
    yield pid
    for k in kids.get(pid, []):
        yield from tree(k, kids)


def scan(pid):
    found = total = 0
    with open("/proc/%d/maps" % pid) as maps, open("/proc/%d/mem" % pid, "rb", 0) as mem:
        for line in maps:
            parts = line.split()
            if "r" not in parts[1] or (len(parts) > 5 and parts[5] in ("[vvar]", "[vsyscall]")):
                continue
            lo, hi = (int(x, 16) for x in parts[0].split("-"))
            tail = b""
            at = lo
            while at < hi:
                n = min(16 << 20, hi - at)
                try:
                    mem.seek(at)
                    buf = mem.read(n)
                except OSError:
                    buf = b""
                if not buf:
                    break
                total += len(buf)
                data = tail + buf
                found += data.count(needle)
                # a match across two reads; len - 1 bytes hold no whole one
                tail = data[-(len(needle) - 1):] if len(needle) > 1 else b""
                at += len(buf)
    return found, total


kids = children()
status = 0
for pid in tree(root, kids):
    try:
        comm = open("/proc/%d/comm" % pid).read().strip()
        found, total = scan(pid)
    except OSError as e:
        if not os.path.exists("/proc/%d" % pid):
            # It ended between the listing and the read (a short-lived
            # helper): nothing of it is left to hold the value.  The
            # processes the test asks about must still each have a line.
            print("gone %d" % pid)
            continue
        print("unreadable %d %s" % (pid, e))
        status = 1
        continue
    kind = "parent" if pid == root else "broker" if comm == "airlock-broker" else "vm"
    print("%s %d found %d in %d MiB" % (kind, pid, found, total >> 20))
sys.exit(status)
