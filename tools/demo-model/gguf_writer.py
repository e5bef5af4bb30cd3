"""A minimal GGUF v3 writer (struct + numpy): typed metadata and F32/F16 tensors.

Layout: header (magic, version 3, tensor count, metadata count), metadata
key/value pairs, tensor infos (name, dims in ggml order = reversed numpy
shape, type, offset), padding to `general.alignment` (32), tensor data, each
tensor starting at a multiple of the alignment.
"""
import struct

import numpy as np

ALIGN = 32
# metadata value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
# tensor types
GGML_F32, GGML_F16 = 0, 1

_SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?",
           U64: "<Q", I64: "<q", F64: "<d"}


def _string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def _value(vtype, v):
    if vtype == STRING:
        return _string(v)
    return struct.pack(_SCALAR[vtype], v)


class GGUFWriter:
    def __init__(self):
        self.kv = []       # (key, bytes of type + value)
        self.tensors = []  # (name, numpy array, ggml type)

    def add(self, key, vtype, value):
        self.kv.append((key, struct.pack("<I", vtype) + _value(vtype, value)))

    def add_array(self, key, etype, values):
        body = b"".join(_value(etype, v) for v in values) if etype in (STRING, BOOL) else \
            np.asarray(values, dtype=np.dtype(_SCALAR[etype])).tobytes()
        self.kv.append((key, struct.pack("<IIQ", ARRAY, etype, len(values)) + body))

    def add_tensor(self, name, array, ggml_type):
        dtype = {GGML_F32: np.float32, GGML_F16: np.float16}[ggml_type]
        self.tensors.append((name, np.ascontiguousarray(array, dtype=dtype), ggml_type))

    def write(self, path):
        out = bytearray(b"GGUF")
        out += struct.pack("<IQQ", 3, len(self.tensors), len(self.kv))
        for key, body in self.kv:
            out += _string(key) + body
        offset = 0
        offsets = []
        for name, a, t in self.tensors:
            offsets.append(offset)
            out += _string(name) + struct.pack("<I", a.ndim)
            out += b"".join(struct.pack("<Q", n) for n in reversed(a.shape))
            out += struct.pack("<IQ", t, offset)
            offset += (a.nbytes + ALIGN - 1) // ALIGN * ALIGN
        out += b"\0" * (-len(out) % ALIGN)
        for (name, a, t), off in zip(self.tensors, offsets):
            out += a.tobytes()
            out += b"\0" * (-len(out) % ALIGN)
        with open(path, "wb") as f:
            f.write(out)
