"""Flips one bit of CPUID leaf 0x1.0 ecx in vcpu@0's table of a snapshot's
state.dtb, in place, as a snapshot taken on a CPU with one feature more or
less would have it (tests/boot/linux-snapshot: the restore must refuse).

  snapshot-cpuid-edit.py STATE_DTB

Walks the flattened tree's structure block (devicetree spec 5.4); prints
the old and new ecx."""
import struct
import sys

BEGIN_NODE, END_NODE, PROP, NOP, END = 1, 2, 3, 4, 9
path = sys.argv[1]
blob = bytearray(open(path, "rb").read())
off_struct, off_strings = struct.unpack_from(">II", blob, 8)
pos, node = off_struct, ""
while True:
    (tok,) = struct.unpack_from(">I", blob, pos)
    pos += 4
    if tok == BEGIN_NODE:
        end = blob.index(0, pos)
        node = blob[pos:end].decode()
        pos = (end + 4) & ~3
    elif tok == PROP:
        length, nameoff = struct.unpack_from(">II", blob, pos)
        pos += 8
        name = blob[off_strings + nameoff:blob.index(0, off_strings + nameoff)].decode()
        if node == "vcpu@0" and name == "cpuid":
            for rec in range(pos, pos + length, 28):
                function, index, _flags, _eax, _ebx, ecx = struct.unpack_from(">6I", blob, rec)
                if (function, index) == (1, 0):
                    struct.pack_into(">I", blob, rec + 20, ecx ^ (1 << 30))  # RDRAND
                    open(path, "wb").write(blob)
                    print("ecx %#x -> %#x" % (ecx, ecx ^ (1 << 30)))
                    sys.exit(0)
        pos = (pos + length + 3) & ~3
    elif tok in (END_NODE, NOP):
        continue
    else:
        break
sys.exit("no CPUID leaf 0x1.0 in vcpu@0")
