#!/usr/bin/env python3
"""Images for tests/image/run-tests, made here with no registry: each an
OCI image layout folder (and the same as a tar), a docker-save archive,
and hostile variants.

    make_images.py OUTDIR
"""
import gzip, os, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from oci_write import docker_save, oci, tar_bytes  # noqa: E402

out = sys.argv[1]


base = tar_bytes([("etc", "d", None, 0o755, 0), ("etc/os-release", "f", b"NAME=test\n", 0o644, 0),
                  ("etc/gone", "f", b"x", 0o644, 0), ("opt", "d", None, 0o755, 0),
                  ("opt/old", "f", b"old", 0o644, 0), ("bin", "d", None, 0o755, 0),
                  ("bin/app", "f", b"#!/bin/sh\necho app\n", 0o4755, 0),
                  ("home", "d", None, 0o755, 1000), ("home/user", "f", b"mine", 0o600, 1000)])
top = tar_bytes([("etc/.wh.gone", "f", b"", 0o644, 0), ("opt/.wh..wh..opq", "f", b"", 0o644, 0),
                 ("opt/new", "f", b"new", 0o644, 0), ("bin/app2", "h", "bin/app", 0o4755, 0),
                 ("bin/sh", "l", "/bin/busybox", 0o777, 0)], gz=True)
oci(out, "multi", [(base, False), (top, True)])

# docker save: manifest.json, a config named by its sha256, layer.tar files
docker_save(out, "docker", [base], {"config": {"Cmd": ["/bin/app"]}})

# a plain rootfs tarball
with open(os.path.join(out, "rootfs.tar"), "wb") as f:
    f.write(base)

# names outside ASCII (PAX headers carry them as UTF-8)
with open(os.path.join(out, "utf8.tar"), "wb") as f:
    f.write(tar_bytes([("caf\u00e9", "f", b"x", 0o644, 0), ("lien", "l", "caf\u00e9", 0o777, 0)]))

# hostile ones
oci(out, "dotdot", [(tar_bytes([("../escape", "f", b"x", 0o644, 0)]), False)])
oci(out, "through-link", [(tar_bytes([("a", "l", "/tmp", 0o777, 0), ("a/planted", "f", b"x", 0o644, 0)]), False)])
oci(out, "hardlink-out", [(tar_bytes([("x", "h", "../../etc/passwd", 0o644, 0)]), False)])
bomb = gzip.compress(tar_bytes([("zeros", "f", b"\0" * (64 << 20), 0o644, 0)]), mtime=0)
oci(out, "bomb", [(bomb, True)])


def swap_layer(d, descs):
    with open(os.path.join(d, "blobs", "sha256", descs[0]["digest"][7:]), "r+b") as f:
        f.seek(600)
        f.write(b"tampered")
oci(out, "mismatch", [(base, False)], tamper=swap_layer)


def break_json(d, descs):
    with open(os.path.join(d, "index.json"), "w") as f:
        f.write('{"manifests": [')
oci(out, "badjson", [(base, False)], tamper=break_json)
deep = "/".join(["d"] * 300)
oci(out, "deep", [(tar_bytes([(deep + "/f", "f", b"x", 0o644, 0)]), False)])

# one folder of 10,001 entries: past rootfs_disk's bound (mke2fs -d's
# time grows with the square of a folder's entries)
with open(os.path.join(out, "wide.tar"), "wb") as f:
    f.write(tar_bytes([("wide", "d", None, 0o755, 0)] +
                      [("wide/f%05d" % i, "f", b"", 0o644, 0) for i in range(10001)]))
# 40,000 empty files in 40 folders: an import that runs long enough
# (seconds, in mke2fs and debugfs) to be stopped mid-way
with open(os.path.join(out, "many.tar"), "wb") as f:
    f.write(tar_bytes([("d%02d/f%04d" % (d, i), "f", b"", 0o644, 0)
                       for d in range(40) for i in range(1000)]))
print("made", flush=True)
