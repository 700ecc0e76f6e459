#!/usr/bin/env python3
"""Images for tests/image/run-tests, made here with no registry: each an
OCI image layout folder (and the same as a tar), a docker-save archive,
and hostile variants.

    make_images.py OUTDIR
"""
import gzip, hashlib, io, json, os, sys, tarfile

out = sys.argv[1]


def tar_bytes(entries, gz=False):
    """entries: (name, kind, data_or_target, mode, uid)"""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, kind, data, mode, uid in entries:
            ti = tarfile.TarInfo(name)
            ti.mode, ti.uid, ti.gid = mode, uid, uid
            if kind == "f":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
            elif kind == "d":
                ti.type = tarfile.DIRTYPE
                t.addfile(ti)
            elif kind == "l":
                ti.type, ti.linkname = tarfile.SYMTYPE, data
                t.addfile(ti)
            elif kind == "h":
                ti.type, ti.linkname = tarfile.LNKTYPE, data
                t.addfile(ti)
    raw = buf.getvalue()
    return gzip.compress(raw, mtime=0) if gz else raw


def sha(b):
    return "sha256:" + hashlib.sha256(b).hexdigest()


def oci(name, layers, config=None, tamper=None):
    d = os.path.join(out, name)
    os.makedirs(os.path.join(d, "blobs", "sha256"), exist_ok=True)

    def blob(b):
        h = sha(b)
        with open(os.path.join(d, "blobs", "sha256", h[7:]), "wb") as f:
            f.write(b)
        return h
    descs = []
    for raw, gz in layers:
        descs.append({"mediaType": "application/vnd.oci.image.layer.v1.tar" + ("+gzip" if gz else ""),
                      "digest": blob(raw), "size": len(raw)})
    cfg = json.dumps(config or {"architecture": "amd64", "os": "linux",
                                "config": {"Env": ["PATH=/usr/bin:/bin", "GREETING=hello"],
                                           "WorkingDir": "/srv", "Cmd": ["/bin/app"]},
                                "rootfs": {"type": "layers", "diff_ids": []}}).encode()
    man = json.dumps({"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
                      "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                                 "digest": blob(cfg), "size": len(cfg)},
                      "layers": descs}).encode()
    mh = blob(man)
    with open(os.path.join(d, "index.json"), "w") as f:
        json.dump({"schemaVersion": 2, "manifests": [
            {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": mh,
             "size": len(man), "platform": {"os": "linux", "architecture": "amd64"}}]}, f)
    with open(os.path.join(d, "oci-layout"), "w") as f:
        f.write('{"imageLayoutVersion":"1.0.0"}')
    if tamper:
        tamper(d, descs)
    with tarfile.open(os.path.join(out, name + ".tar"), "w") as t:
        for n in sorted(os.listdir(d)):
            t.add(os.path.join(d, n), arcname=n)


base = tar_bytes([("etc", "d", None, 0o755, 0), ("etc/os-release", "f", b"NAME=test\n", 0o644, 0),
                  ("etc/gone", "f", b"x", 0o644, 0), ("opt", "d", None, 0o755, 0),
                  ("opt/old", "f", b"old", 0o644, 0), ("bin", "d", None, 0o755, 0),
                  ("bin/app", "f", b"#!/bin/sh\necho app\n", 0o4755, 0),
                  ("home", "d", None, 0o755, 1000), ("home/user", "f", b"mine", 0o600, 1000)])
top = tar_bytes([("etc/.wh.gone", "f", b"", 0o644, 0), ("opt/.wh..wh..opq", "f", b"", 0o644, 0),
                 ("opt/new", "f", b"new", 0o644, 0), ("bin/app2", "h", "bin/app", 0o4755, 0),
                 ("bin/sh", "l", "/bin/busybox", 0o777, 0)], gz=True)
oci("multi", [(base, False), (top, True)])

# docker save: manifest.json, a config named by its sha256, layer.tar files
d = os.path.join(out, "docker")
os.makedirs(os.path.join(d, "l1"), exist_ok=True)
with open(os.path.join(d, "l1", "layer.tar"), "wb") as f:
    f.write(base)
cfg = json.dumps({"config": {"Cmd": ["/bin/app"]}, "rootfs": {"type": "layers", "diff_ids": [sha(base)]}}).encode()
with open(os.path.join(d, sha(cfg)[7:] + ".json"), "wb") as f:
    f.write(cfg)
with open(os.path.join(d, "manifest.json"), "w") as f:
    json.dump([{"Config": sha(cfg)[7:] + ".json", "RepoTags": ["test:1"], "Layers": ["l1/layer.tar"]}], f)
with tarfile.open(os.path.join(out, "docker.tar"), "w") as t:
    for n in sorted(os.listdir(d)):
        t.add(os.path.join(d, n), arcname=n)

# a plain rootfs tarball
with open(os.path.join(out, "rootfs.tar"), "wb") as f:
    f.write(base)

# hostile ones
oci("dotdot", [(tar_bytes([("../escape", "f", b"x", 0o644, 0)]), False)])
oci("through-link", [(tar_bytes([("a", "l", "/tmp", 0o777, 0), ("a/planted", "f", b"x", 0o644, 0)]), False)])
oci("hardlink-out", [(tar_bytes([("x", "h", "../../etc/passwd", 0o644, 0)]), False)])
bomb = gzip.compress(tar_bytes([("zeros", "f", b"\0" * (64 << 20), 0o644, 0)]), mtime=0)
oci("bomb", [(bomb, True)])


def swap_layer(d, descs):
    with open(os.path.join(d, "blobs", "sha256", descs[0]["digest"][7:]), "r+b") as f:
        f.seek(600)
        f.write(b"tampered")
oci("mismatch", [(base, False)], tamper=swap_layer)


def break_json(d, descs):
    with open(os.path.join(d, "index.json"), "w") as f:
        f.write('{"manifests": [')
oci("badjson", [(base, False)], tamper=break_json)
deep = "/".join(["d"] * 300)
oci("deep", [(tar_bytes([(deep + "/f", "f", b"x", 0o644, 0)]), False)])
print("made", flush=True)
