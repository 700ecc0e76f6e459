#!/usr/bin/env python3
"""The images tests/boot/linux-image imports and runs, made here with no
registry or engine (tests/image/oci_write.py):

  scratch.tar   an OCI layout (as a tar): FROM scratch, one static binary,
                Entrypoint + Cmd, Env, WorkingDir, User as numbers
  musl.tar      a docker-save archive: a musl program and musl's loader,
                User by name from the image's /etc/passwd
  layers/       an OCI layout folder: busybox, then a layer with a
                whiteout, an opaque folder and a hardlink to a file of the
                layer below
  python.tar    (with PYTHON_TREE) a docker-save archive of the Debian
                python3 root tree

    make_run_images.py OUT HELLO_STATIC HELLO_MUSL MUSL_LOADER BUSYBOX [PYTHON_TREE]
"""
import io, os, sys, tarfile

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "image"))
from oci_write import docker_save, oci, tar_bytes  # noqa: E402

out, hello_static, hello_musl, musl_loader, busybox = sys.argv[1:6]
python_tree = sys.argv[6] if len(sys.argv) > 6 else None
os.makedirs(out, exist_ok=True)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def config(**c):
    return {"architecture": "amd64", "os": "linux", "config": c,
            "rootfs": {"type": "layers", "diff_ids": []}}


oci(out, "scratch",
    [(tar_bytes([("hello", "f", read(hello_static), 0o755, 0), ("work", "d", None, 0o777, 0)]), True)],
    config(Entrypoint=["/hello"], Cmd=["from-cmd"], Env=["PATH=/", "GREETING=from-image"],
           WorkingDir="/work", User="1234:5678"))

docker_save(out, "musl", [tar_bytes([
    ("lib", "d", None, 0o755, 0), ("lib/ld-musl-x86_64.so.1", "f", read(musl_loader), 0o755, 0),
    ("bin", "d", None, 0o755, 0), ("bin/hello", "f", read(hello_musl), 0o755, 0),
    ("etc", "d", None, 0o755, 0),
    ("etc/passwd", "f", b"root:x:0:0:root:/root:/bin/hello\napp:x:4321:4322:app:/home/app:/bin/hello\n",
     0o644, 0),
    ("etc/group", "f", b"root:x:0:\napp:x:4322:\nstaff:x:50:\n", 0o644, 0)])],
    config(Cmd=["/bin/hello", "musl"], Env=["PATH=/bin"], User="app"))

bb = read(busybox)
oci(out, "layers", [
    (tar_bytes([("bin", "d", None, 0o755, 0), ("bin/busybox", "f", bb, 0o755, 0),
                ("bin/sh", "l", "busybox", 0o777, 0), ("etc", "d", None, 0o755, 0),
                ("etc/gone", "f", b"gone\n", 0o644, 0), ("opt", "d", None, 0o755, 0),
                ("opt/old", "f", b"old\n", 0o644, 0), ("data", "d", None, 0o755, 0),
                ("data/a", "f", b"shared\n", 0o644, 0)]), False),
    (tar_bytes([("etc/.wh.gone", "f", b"", 0o644, 0), ("opt/.wh..wh..opq", "f", b"", 0o644, 0),
                ("opt/new", "f", b"new\n", 0o644, 0), ("data/b", "h", "data/a", 0o644, 0)]), True)],
    config(Cmd=["/bin/sh", "-c", "echo layers-cmd"], Env=["PATH=/bin"]))
# the folder itself, not only its tar
os.remove(os.path.join(out, "layers.tar"))

if python_tree:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name in sorted(os.listdir(python_tree)):
            t.add(os.path.join(python_tree, name), arcname=name)
    docker_save(out, "python", [buf.getvalue()],
                config(Cmd=["python3", "-c", "print('python-cmd')"],
                       Env=["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"]))
print("made", flush=True)
