"""Image archives written by hand, with no registry and no engine: tar
layers, OCI image layouts (a folder and the same as a tar) and docker-save
archives.  Shared by tests/image/make_images.py and the lab's
tests/boot/image/make_run_images.py."""
import gzip, hashlib, io, json, os, tarfile


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


def oci(out, name, layers, config=None, tamper=None):
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




def docker_save(out, name, layers, config):
    """A docker-save archive out/NAME.tar of raw (uncompressed) layers;
    config gets its rootfs.diff_ids filled in."""
    d = os.path.join(out, name)
    names = []
    for i, raw in enumerate(layers):
        os.makedirs(os.path.join(d, "l%d" % i), exist_ok=True)
        with open(os.path.join(d, "l%d" % i, "layer.tar"), "wb") as f:
            f.write(raw)
        names.append("l%d/layer.tar" % i)
    config = dict(config, rootfs={"type": "layers", "diff_ids": [sha(raw) for raw in layers]})
    cfg = json.dumps(config).encode()
    with open(os.path.join(d, sha(cfg)[7:] + ".json"), "wb") as f:
        f.write(cfg)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump([{"Config": sha(cfg)[7:] + ".json", "RepoTags": [name + ":1"], "Layers": names}], f)
    with tarfile.open(os.path.join(out, name + ".tar"), "w") as t:
        for n in sorted(os.listdir(d)):
            t.add(os.path.join(d, n), arcname=n)
