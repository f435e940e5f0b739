"""The int8 scan: every row scored against a batch of queries in 8-bit integers, and only the rows that can
still reach a query's top k let through.

Rows are rounded to one scale for the whole set, ``x ~ s (u - 128)`` with ``u`` in 1..255 (unsigned bytes);
each query to its own scale, ``q ~ t v`` with ``v`` in -127..127 (signed bytes). The compiled kernel multiplies
16 rows by 8 queries at a time, four dimensions per byte lane (AVX512-VNNI's ``vpdpbusd``: 64 multiply-adds per
instruction, four times float32's rate), compares each integer score with its query's integer cut while it is
still in a register, and writes out only the rows that reach it: no score matrix is ever stored. The kernel is
LLVM IR compiled for this CPU by llvmlite (numba's own backend: no C compiler needed); without VNNI the same IR
uses a portable multiply-add, so every machine computes the same integers. ``LEXPROBE_INT8_PORTABLE=1`` in the
environment (read once per process) forces the portable multiply-add on a VNNI machine too, to test that path.

Bound: ``|q.x - t s v.(u-128)| <= |q - t v| |x| + |t v| |x - s (u-128)|`` (Cauchy-Schwarz on the two
rounding residuals), with the row residual's maximum kept per row set (:attr:`Int8Rows.residual`). The caller
turns a score threshold into an integer cut with :func:`integer_cuts`.
"""

from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from functools import cache

import numpy as np

from .compile_cache import compiled_once, load_object, object_key, save_object
from .cores import in_parallel

LANES = 16       # rows per block (one 512-bit register of int32 scores)
QUERIES = 8      # queries per tile (eight accumulators stay in registers)
_CHUNK = 256     # blocks per chunk: 4,096 rows (about 200 KB at 50 dimensions) stay in L2 across the tiles
SKIP = np.iinfo(np.int32).max  # a cut no score reaches: the query is not scanned


@dataclass
class Int8Rows:
    """Rows rounded to unsigned bytes, packed for the kernel: ``packed[b, g, i, :]`` holds dimensions 4g..4g+3
    of row 16b + i (rows and dimensions padded with the byte for zero)."""

    packed: np.ndarray  # (blocks, groups, 16, 4) uint8
    scale: float        # s: x ~ s (u - 128)
    residual: float     # an upper bound of |x - s (u - 128)| over the rows

    @classmethod
    def of(cls, V: np.ndarray) -> "Int8Rows":
        n, d = V.shape
        top = float(np.abs(V).max(initial=0.0))
        scale = top / 127 if top > 0 else 1.0
        w = np.rint(V / np.float32(scale)).clip(-127, 127).astype(np.int8)
        residual = np.sqrt(((V.astype(np.float64) - w.astype(np.float64) * scale) ** 2).sum(axis=1).max(initial=0.0))
        blocks, groups = -(-n // LANES), -(-d // 4)
        u = np.full((blocks * LANES, groups * 4), 128, dtype=np.uint8)
        u[:n, :d] = (w.astype(np.int16) + 128).astype(np.uint8)
        packed = np.ascontiguousarray(u.reshape(blocks, LANES, groups, 4).transpose(0, 2, 1, 3))
        return cls(packed, scale, residual * (1 + 1e-6) + 1e-30)

    @property
    def groups(self) -> int:
        return self.packed.shape[1]


@dataclass
class Int8Queries:
    """Queries rounded to signed bytes (``q ~ t v``), padded to whole tiles of :data:`QUERIES`."""

    packed: np.ndarray   # (m_padded, groups) int32: four signed bytes each
    scale: np.ndarray    # (m,) t
    residual: np.ndarray  # (m,) |q - t v|
    rounded_norm: np.ndarray  # (m,) |t v|
    offset: np.ndarray   # (m,) 128 sum(v): the kernel's integer score is v.(u - 128) + offset

    @classmethod
    def of(cls, Q: np.ndarray, groups: int) -> "Int8Queries":
        m, d = Q.shape
        top = np.abs(Q).max(axis=1, initial=0.0).astype(np.float64)
        scale = np.where(top > 0, top / 127, 1.0)
        v = np.rint(Q / scale[:, None]).clip(-127, 127)
        residual = np.sqrt(((Q - v * scale[:, None]) ** 2).sum(axis=1)) * (1 + 1e-6)
        rounded = np.sqrt(((v * scale[:, None]) ** 2).sum(axis=1)) * (1 + 1e-6)
        padded = np.zeros((-(-m // QUERIES) * QUERIES, groups * 4), dtype=np.int8)
        padded[:m, :d] = v
        return cls(padded.view(np.int32), scale, residual, rounded, 128 * v.sum(axis=1))


def rounding_bound(rows: Int8Rows, queries: Int8Queries, max_norm: float) -> np.ndarray:
    """Per query, a bound of |exact score - ``unit`` (integer score - offset)| over the rows (``max_norm``: the
    largest row norm, or more)."""
    return queries.residual * max_norm + queries.rounded_norm * rows.residual


def integer_cuts(rows: Int8Rows, queries: Int8Queries, floor: np.ndarray, max_norm: float) -> np.ndarray:
    """Per query, the int32 cut of the kernel's score that every row whose exact score can reach ``floor``
    passes (``floor`` -inf or a zero query: :data:`SKIP`)."""
    unit = queries.scale * rows.scale
    with np.errstate(invalid="ignore", over="ignore"):
        cut = np.floor((floor.astype(np.float64) - rounding_bound(rows, queries, max_norm)) / unit) - 1
    cut = np.where(np.isfinite(cut) & (queries.rounded_norm > 0), cut + queries.offset, SKIP)
    out = np.full(len(queries.packed), SKIP, dtype=np.int32)
    out[: len(cut)] = np.clip(cut, np.iinfo(np.int32).min, SKIP)
    return out


def integer_band(rows: Int8Rows, queries: Int8Queries, width: np.ndarray, max_norm: float) -> np.ndarray:
    """Per query, an integer-score width covering ``width`` plus twice the rounding bound: two rows whose
    exact scores differ by at most ``width`` have integer scores less than this apart."""
    unit = queries.scale * rows.scale
    band = np.ceil((width + 2 * rounding_bound(rows, queries, max_norm)) / unit) + 1
    return np.minimum(band, 2.0 ** 62).astype(np.int64)


def scan(rows: Int8Rows, queries: Int8Queries, cut: np.ndarray, limit: int, cap: int
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``< limit`` whose integer score reaches the query's cut: ``(counts, cand, scores)``;
    ``cand[r, :counts[r]]`` lists query r's rows in ascending order and ``scores`` their integer scores while
    ``counts[r] <= cap``; past ``cap`` only the count goes on."""
    m = len(queries.packed)
    counts = np.zeros(m, dtype=np.int64)
    cand = np.empty((m, cap), dtype=np.int64)
    scores = np.empty((m, cap), dtype=np.int32)
    blocks = -(-limit // LANES)
    tiles = m // QUERIES
    if not tiles or not blocks:
        return counts, cand, scores
    kernel = _kernel(_has_vnni())[0]

    def run(a: int, b: int) -> None:  # tiles a..b-1
        q0 = a * QUERIES
        kernel(rows.packed.ctypes.data, blocks, limit, queries.packed[q0:].ctypes.data, b - a, rows.groups,
               cut[q0:].ctypes.data, counts[q0:].ctypes.data, cap, cand[q0:].ctypes.data, scores[q0:].ctypes.data,
               _CHUNK)

    in_parallel(tiles, run, serial_below=2)
    return counts, cand, scores


@cache
def _has_vnni() -> bool:
    if os.environ.get("LEXPROBE_INT8_PORTABLE") == "1":
        return False
    import llvmlite.binding as llvm

    return "+avx512vnni" in llvm.get_host_cpu_features().flatten().split(",")


_PORTABLE_DP = """
define internal <16 x i32> @dp(<16 x i32> %acc, <16 x i32> %a, <16 x i32> %b) alwaysinline {
  %a8 = bitcast <16 x i32> %a to <64 x i8>
  %b8 = bitcast <16 x i32> %b to <64 x i8>
  %az = zext <64 x i8> %a8 to <64 x i32>
  %bs = sext <64 x i8> %b8 to <64 x i32>
  %p = mul <64 x i32> %az, %bs
""" + "".join(
    f"  %p{j} = shufflevector <64 x i32> %p, <64 x i32> poison, <16 x i32> <"
    + ", ".join(f"i32 {4 * i + j}" for i in range(16)) + ">\n" for j in range(4)) + """\
  %s0 = add <16 x i32> %p0, %p1
  %s1 = add <16 x i32> %p2, %p3
  %s = add <16 x i32> %s0, %s1
  %r = add <16 x i32> %acc, %s
  ret <16 x i32> %r
}
"""

_VNNI_DP = """
declare <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32>, <16 x i32>, <16 x i32>)
define internal <16 x i32> @dp(<16 x i32> %acc, <16 x i32> %a, <16 x i32> %b) alwaysinline {
  %r = call <16 x i32> @llvm.x86.avx512.vpdpbusd.512(<16 x i32> %acc, <16 x i32> %a, <16 x i32> %b)
  ret <16 x i32> %r
}
"""


def _splat(name: str, scalar: str) -> str:
    """IR: ``%name`` = the i32 ``%scalar`` in all 16 lanes."""
    return (f"  %{name}.one = insertelement <16 x i32> poison, i32 %{scalar}, i64 0\n"
            f"  %{name} = shufflevector <16 x i32> %{name}.one, <16 x i32> poison, <16 x i32> zeroinitializer")


def _loop(label: str, counter: str, value: str, bound: str, body: str, done: str) -> str:
    """IR: block ``label`` loads ``%counter`` into ``%value``, then goes to ``body`` while it is below
    ``%bound``, else to ``done``."""
    return (f"{label}:\n  %{value} = load i64, ptr %{counter}\n  %{value}.done = icmp sge i64 %{value}, %{bound}\n"
            f"  br i1 %{value}.done, label %{done}, label %{body}")


def kernel_ir(vnni: bool) -> str:
    """The scan as LLVM IR: ``dp(acc, a, b)`` adds to each int32 lane the products of its four unsigned bytes
    of ``a`` and signed bytes of ``b`` (``vpdpbusd``, or the portable same)."""
    lines = [_VNNI_DP if vnni else _PORTABLE_DP, "declare i16 @llvm.cttz.i16(i16, i1)", """
define void @scan(ptr noalias %V, i64 %blocks, i64 %limit, ptr noalias %Q, i64 %tiles, i64 %G, ptr noalias %cut,
                  ptr noalias %count, i64 %cap, ptr noalias %cand, ptr noalias %score, i64 %chunk) nounwind {
entry:
  %c = alloca i64
  %t = alloca i64
  %b = alloca i64
  %g = alloca i64
  %bits = alloca i16"""]
    add = lines.append
    for j in range(QUERIES):
        add(f"  %acc{j} = alloca <16 x i32>, align 64")
    add("""  store i64 0, ptr %c
  br label %chunk_loop
""" + _loop("chunk_loop", "c", "c0", "blocks", "chunk_body", "exit") + """
chunk_body:
  %cend0 = add i64 %c0, %chunk
  %cshort = icmp slt i64 %cend0, %blocks
  %cend = select i1 %cshort, i64 %cend0, i64 %blocks
  store i64 0, ptr %t
  br label %tile_loop
""" + _loop("tile_loop", "t", "tv", "tiles", "tile_body", "chunk_next") + """
tile_body:
  %qb = mul i64 %tv, """ + str(QUERIES))
    for j in range(QUERIES):
        add(f"""  %qr{j} = add i64 %qb, {j}
  %cutp{j} = getelementptr i32, ptr %cut, i64 %qr{j}
  %cut{j} = load i32, ptr %cutp{j}
{_splat(f"cutv{j}", f"cut{j}")}
  %qrow{j} = mul i64 %qr{j}, %G""")
    add("""  store i64 %c0, ptr %b
  br label %row_loop
""" + _loop("row_loop", "b", "bv", "cend", "row_body", "tile_next") + """
row_body:""")
    for j in range(QUERIES):
        add(f"  store <16 x i32> zeroinitializer, ptr %acc{j}, align 64")
    add("""  %vrow = mul i64 %bv, %G
  store i64 0, ptr %g
  br label %dim_loop
""" + _loop("dim_loop", "g", "gv", "G", "dim_body", "test0") + """
dim_body:
  %vi = add i64 %vrow, %gv
  %vp = getelementptr <16 x i32>, ptr %V, i64 %vi
  %vx = load <16 x i32>, ptr %vp, align 4""")
    for j in range(QUERIES):
        add(f"""  %qi{j} = add i64 %qrow{j}, %gv
  %qp{j} = getelementptr i32, ptr %Q, i64 %qi{j}
  %qs{j} = load i32, ptr %qp{j}
{_splat(f"qv{j}", f"qs{j}")}
  %ao{j} = load <16 x i32>, ptr %acc{j}, align 64
  %an{j} = call <16 x i32> @dp(<16 x i32> %ao{j}, <16 x i32> %vx, <16 x i32> %qv{j})
  store <16 x i32> %an{j}, ptr %acc{j}, align 64""")
    add("""  %gn = add i64 %gv, 1
  store i64 %gn, ptr %g
  br label %dim_loop""")
    for j in range(QUERIES):
        nxt = f"test{j + 1}" if j + 1 < QUERIES else "row_next"
        add(f"""test{j}:
  %af{j} = load <16 x i32>, ptr %acc{j}, align 64
  %mk{j} = icmp sge <16 x i32> %af{j}, %cutv{j}
  %mb{j} = bitcast <16 x i1> %mk{j} to i16
  %hit{j} = icmp ne i16 %mb{j}, 0
  br i1 %hit{j}, label %hits{j}, label %{nxt}
hits{j}:
  store i16 %mb{j}, ptr %bits
  %cntp{j} = getelementptr i64, ptr %count, i64 %qr{j}
  %slot{j} = mul i64 %qr{j}, %cap
  br label %bit{j}
bit{j}:
  %bb{j} = load i16, ptr %bits
  %more{j} = icmp ne i16 %bb{j}, 0
  br i1 %more{j}, label %bit_body{j}, label %{nxt}
bit_body{j}:
  %lane{j} = call i16 @llvm.cttz.i16(i16 %bb{j}, i1 true)
  %bm{j} = sub i16 %bb{j}, 1
  %br{j} = and i16 %bb{j}, %bm{j}
  store i16 %br{j}, ptr %bits
  %lz{j} = zext i16 %lane{j} to i64
  %base{j} = mul i64 %bv, 16
  %row{j} = add i64 %base{j}, %lz{j}
  %inside{j} = icmp slt i64 %row{j}, %limit
  br i1 %inside{j}, label %keep{j}, label %bit{j}
keep{j}:
  %seen{j} = load i64, ptr %cntp{j}
  %next{j} = add i64 %seen{j}, 1
  store i64 %next{j}, ptr %cntp{j}
  %room{j} = icmp slt i64 %seen{j}, %cap
  br i1 %room{j}, label %store{j}, label %bit{j}
store{j}:
  %at{j} = add i64 %slot{j}, %seen{j}
  %cp{j} = getelementptr i64, ptr %cand, i64 %at{j}
  store i64 %row{j}, ptr %cp{j}
  %sv{j} = extractelement <16 x i32> %af{j}, i16 %lane{j}
  %sp{j} = getelementptr i32, ptr %score, i64 %at{j}
  store i32 %sv{j}, ptr %sp{j}
  br label %bit{j}""")
    add("""row_next:
  %bn = add i64 %bv, 1
  store i64 %bn, ptr %b
  br label %row_loop
tile_next:
  %tn = add i64 %tv, 1
  store i64 %tn, ptr %t
  br label %tile_loop
chunk_next:
  store i64 %cend, ptr %c
  br label %chunk_loop
exit:
  ret void
}""")
    return "\n".join(lines)


@compiled_once
def _kernel(vnni: bool):
    """The scan compiled for this CPU (once per process; the object code is kept in the compiled-code folder,
    :mod:`lexprobe.core.compile_cache`): ``(ctypes function, engine)`` of :func:`kernel_ir`."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3)
    ir = kernel_ir(vnni)
    key = object_key(ir, machine)
    stored = load_object(key)
    module = llvm.parse_assembly(ir)
    module.verify()
    if stored is None:
        passes = llvm.create_pass_builder(machine, llvm.create_pipeline_tuning_options(speed_level=3))
        passes.getModulePassManager().run(module, passes)
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.set_object_cache(lambda _, code: save_object(key, code), lambda _: stored)
    engine.finalize_object()
    p, i = ctypes.c_void_p, ctypes.c_int64
    function = ctypes.CFUNCTYPE(None, p, i, i, p, i, i, p, p, i, p, p, i)(engine.get_function_address("scan"))
    return function, engine  # the compiled code lives as long as its engine
