"""A PEP 517 build backend for this one pure-Python package, in the tree so
that `pip install ./python` works without an index (pip's isolated build
would otherwise download setuptools).  It writes a wheel (PEP 427) of the
airlock/ folder and an sdist of the whole folder; nothing else."""
import base64
import hashlib
import io
import os
import tarfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "airlock"


def _version():
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    raise RuntimeError("pyproject.toml has no version")


def _metadata(version):
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {version}\n"
            "Summary: Client for airlock serve: sandboxes (microVMs) that live for a task\n"
            "Requires-Python: >=3.9\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def _package_files():
    pkg = os.path.join(HERE, NAME)
    for root, _, files in os.walk(pkg):
        for name in sorted(files):
            if name.endswith(".pyc"):
                continue
            full = os.path.join(root, name)
            yield os.path.relpath(full, HERE).replace(os.sep, "/"), full


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    version = _version()
    dist_info = f"{NAME}-{version}.dist-info"
    wheel_name = f"{NAME}-{version}-py3-none-any.whl"
    record = ""
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel_name), "w",
                         zipfile.ZIP_DEFLATED) as whl:
        def add(path, data):
            nonlocal record
            whl.writestr(path, data)
            record += _record_line(path, data)
        for rel, full in _package_files():
            with open(full, "rb") as f:
                add(rel, f.read())
        add(f"{dist_info}/METADATA", _metadata(version).encode())
        add(f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: airlock_build\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n")
        record += f"{dist_info}/RECORD,,\n"
        whl.writestr(f"{dist_info}/RECORD", record)
    return wheel_name


def build_sdist(sdist_directory, config_settings=None):
    version = _version()
    base = f"{NAME}-{version}"
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tar:
        for item in ["pyproject.toml", "_build/airlock_build.py"] + \
                [rel for rel, _ in _package_files()]:
            tar.add(os.path.join(HERE, item), arcname=f"{base}/{item}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata(version).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name
