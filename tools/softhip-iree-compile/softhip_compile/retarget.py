"""Retargets one IREE-compiled AMDGPU executable (its linked LLVM IR) to an
x86-64 code object for the software HIP device.

The IR is the per-lane (SIMT) program IREE wrote for an amdgcn target. The
transformation, on the IR through LLVM's API:

1. `llvm.assume` calls go (their alignment bundles on buffer fat pointers
   do not survive step 2, and they only carry optimisation hints).
2. LLVM's own `amdgpu-lower-buffer-fat-pointers` pass turns every address
   space 7 access into `llvm.amdgcn.raw.ptr.buffer.*` calls on a resource.
3. Everything but the kernels becomes internal; unused code goes.
4. Every remaining `llvm.amdgcn.*` intrinsic and inline assembly statement is
   checked against what the software device executes faithfully. Anything
   else is an `UnsupportedConstruct` naming the construct and the kernels
   that reach it: never a silent wrong answer.
5. Intrinsics become calls into the lane runtime (runtime/*.c, linked as
   bitcode); wave-level ones (barriers, cross-lane operations, matrix
   instructions) get a call-site id so that the runtime can tell divergent
   lanes apart. Barriers at the very start and end of a kernel, which order
   nothing, are dropped, so that a kernel without real synchronisation runs
   as a plain loop over its lanes.
6. LDS (address space 3) globals become thread-locals: one host thread runs
   one workgroup at a time, all of its lanes on fibers of that thread.
7. Each kernel gets an entry `softhip_entry__K(ctx)` that reads its
   parameters from the launch and a `softhip_kernel__K` descriptor.
8. The module is switched to x86-64, verified, optimised and emitted.
"""

from __future__ import annotations

import dataclasses
import os
import re
import struct
import sys

import llvm

SOFTHIP_KERNEL_MAGIC = 0x314B4853
SOFTHIP_KERNEL_ABI_VERSION = 2
SOFTHIP_PER_LANE = 2
SOFTHIP_KERNEL_SYNC = 1
SOFTHIP_KERNEL_COROUTINE = 2
SOFTHIP_KERNEL_WORKGROUP_LOOP = 4
# SOFTHIP_WORKGROUP_LOOPS=0: kernels without rendezvous run one lane per call
# of their entry, as before workgroup loops (to compare the two).
WORKGROUP_LOOPS_ENV = "SOFTHIP_WORKGROUP_LOOPS"
# SOFTHIP_COROUTINE_LANES=0 keeps every synchronising kernel on fibers (to
# compare the two).
COROUTINE_LANES_ENV = "SOFTHIP_COROUTINE_LANES"
MAX_LDS_BYTES = 64 * 1024
# Dynamic LDS (`@__dynamic_shared_memory__`) gets the whole budget: the launch
# decides how much of it the kernel may use.
DYNAMIC_LDS_NAME = "__dynamic_shared_memory__"

X86_TRIPLE = "x86_64-unknown-linux-gnu"
AMDGCN_TRIPLE = "amdgcn-amd-amdhsa"


# The LLVM of llvm-nanobind, which parses the IR iree-compile dumps.
BINDINGS_LLVM_MAJOR = 21

# Attributes LLVM releases after 21 print that LLVM 21's parser rejects (and
# llvm-nanobind 21 crashes on a parse error instead of raising). Each is an
# assertion about a function that only enables optimisations, so removing it
# keeps the program's meaning. IREE 3.13's LLVM (24.0.0git) puts
# `nocreateundeforpoison` on intrinsic declarations.
NEWER_LLVM_ATTRIBUTES = ("nocreateundeforpoison",)

# Newer LLVM prints special floating-point constants by name; LLVM 21 reads
# only the hexadecimal forms (float and double as the double's bits, half
# 0xH, bfloat 0xR).
_FP_FORMATS = {  # type -> (prefix, total bits, exponent bits, hex digits)
    "half": ("0xH", 16, 5, 4), "bfloat": ("0xR", 16, 8, 4),
    "float": ("0x", 64, 11, 16), "double": ("0x", 64, 11, 16),
}
_FP_TYPE = re.compile(r"\b(half|bfloat|float|double|x86_fp80|fp128|ppc_fp128)\b")
_FP_NAMED = re.compile(r"(?<![\w.%@\"$-])([+-]?)(inf|qnan|snan|nan)(\([^)]*\))?(?![\w.])")
# ... and other constants as `f0x` and the bits of the value in its own type.
_FP_BITS = re.compile(r"(?<![\w.%@\"$-])f0x([0-9A-Fa-f]+)(?![\w.])")
# ... and decimal constants: newer LLVM prints the shortest decimal that reads
# back as the value (`float 1.393050e-03`), LLVM 21 reads a decimal only when
# the type holds it exactly ("floating point constant invalid for type").
_FP_DECIMAL = re.compile(r"(?<![\w.%@\"$-])([+-]?\d+\.\d+(?:[eE][+-]?\d+)?)(?![\w.])")
# `denormal_fpenv(dynamic)` is LLVM 21's "denormal-fp-math"="dynamic,dynamic".
_DENORMAL_FPENV = {"denormal_fpenv(dynamic)": '"denormal-fp-math"="dynamic,dynamic"'}

# The masked memory intrinsics lost their `i32 immarg` alignment operand after
# LLVM 21: the alignment became an `align N` attribute of the pointer operand.
# name -> index of the pointer operand.
_MASKED_POINTER_OPERAND = {"load": 0, "gather": 0, "store": 1, "scatter": 1}
_MASKED_CALL = re.compile(r"@llvm\.masked\.(load|store|gather|scatter)\.[\w.]+\(")


def _fp_hex(type_name: str, sign: str, kind: str, payload: str | None) -> str:
    if type_name not in _FP_FORMATS or payload:
        raise UnsupportedConstruct(
            f"floating-point constant `{sign}{kind}{payload or ''}` of type {type_name} printed by "
            "a newer LLVM has no LLVM 21 spelling in this tool")
    prefix, bits, exponent_bits, digits = _FP_FORMATS[type_name]
    mantissa_bits = bits - 1 - exponent_bits
    value = ((1 << exponent_bits) - 1) << mantissa_bits
    if kind in ("qnan", "nan"):
        value |= 1 << (mantissa_bits - 1)
    elif kind == "snan":
        value |= 1 << (mantissa_bits - 2)
    if sign == "-":
        value |= 1 << (bits - 1)
    return f"{prefix}{value:0{digits}X}"


def _fp_bits_hex(type_name: str, bits: str) -> str:
    value = int(bits, 16)
    if type_name == "float" and len(bits) == 8:
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", struct.unpack("<f", struct.pack("<I", value))[0]))[0]
    if type_name == "double" and len(bits) == 16:
        return f"0x{value:016X}"
    if type_name in ("half", "bfloat") and len(bits) == 4:
        return _FP_FORMATS[type_name][0] + f"{value:04X}"
    raise UnsupportedConstruct(f"floating-point constant `f0x{bits}` of type {type_name} printed by a "
                               "newer LLVM has no LLVM 21 spelling in this tool")


def _fp_decimal_hex(type_name: str | None, text: str) -> str:
    """A decimal constant in LLVM 21's exact form for its type: float as the
    double's bits of the float value, half 0xH, bfloat 0xR (rounded to
    nearest even, as the newer LLVM that printed the shortest decimal
    read it); double, and anything else, unchanged."""
    value = float(text)
    if type_name == "float":
        single = struct.unpack("<f", struct.pack("<f", value))[0]
        return "0x%016X" % struct.unpack("<Q", struct.pack("<d", single))[0]
    if type_name == "half":
        return "0xH%04X" % struct.unpack("<H", struct.pack("<e", value))[0]
    if type_name == "bfloat":
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
        return "0xR%04X" % (((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF)
    return text


def _fp_constants_to_hex(line: str) -> str:
    """Each constant takes the type written last before it on its line (LLVM
    prints a constant after its type, or, for the second operand of a binary
    operation or comparison, after the first operand's)."""
    def type_before(match, required=True):
        types = _FP_TYPE.findall(line, 0, match.start())
        if not types and required:
            raise UnsupportedConstruct(f"floating-point constant `{match.group(0)}` without a type: {line.strip()}")
        return types[-1] if types else None
    line = _FP_NAMED.sub(lambda m: _fp_hex(type_before(m), m.group(1), m.group(2), m.group(3)), line)
    line = _FP_BITS.sub(lambda m: _fp_bits_hex(type_before(m), m.group(1)), line)
    # A decimal without a floating-point type before it is no constant of one: left as is.
    return _FP_DECIMAL.sub(lambda m: _fp_decimal_hex(type_before(m, required=False), m.group(1)), line)


def _split_operands(text: str, start: int) -> tuple[list[str], int]:
    """The comma-separated operands of the parenthesised list opening at
    text[start - 1], and the index of its closing parenthesis."""
    depth, operands, current, i = 0, [], [], start
    while i < len(text):
        c = text[i]
        if c == '"':
            end = text.index('"', i + 1)
            current.append(text[i:end + 1])
            i = end + 1
            continue
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            if depth == 0:
                operands.append("".join(current).strip())
                return operands, i
            depth -= 1
        elif c == "," and depth == 0:
            operands.append("".join(current).strip())
            current = []
            i += 1
            continue
        current.append(c)
        i += 1
    raise UnsupportedConstruct(f"unbalanced operand list: {text[start - 40:start + 80]}")


def _masked_to_llvm21(line: str) -> str:
    match = _MASKED_CALL.search(line)
    if not match:
        return line
    operands, close = _split_operands(line, match.end())
    pointer = _MASKED_POINTER_OPERAND[match.group(1)]
    if len(operands) != 3:  # already LLVM 21's four operands
        return line
    if line.lstrip().startswith("declare"):
        operands.insert(pointer + 1, "i32 immarg")
    else:
        align = re.search(r"\balign (\d+) ", operands[pointer] + " ")
        operands[pointer] = re.sub(r" align \d+\b", "", operands[pointer])
        operands.insert(pointer + 1, f"i32 {align.group(1) if align else 1}")
    return line[:match.end()] + ", ".join(operands) + line[close:]


def downgrade_ir(ir_text: str, ir_llvm_major: int) -> str:
    """IR printed by LLVM `ir_llvm_major`, in the syntax of LLVM 21.

    What IREE 3.13's LLVM (24) prints that LLVM 21 reads otherwise: the
    attributes of NEWER_LLVM_ATTRIBUTES (dropped), floating-point constants
    spelt `-inf`, `-qnan`, `f0x<bits>` or as a decimal the type does not
    hold exactly (their LLVM 21 hexadecimal form),
    `denormal_fpenv(dynamic)` (the "denormal-fp-math" string attribute), and
    masked load/store/gather/scatter with the alignment as an attribute of the
    pointer (the alignment operand again). Nothing else needs rewriting: the
    target triple (the new `amdgpu9.42-amd-amdhsa` form) and the data layout
    are replaced by `retarget`; module flags unknown to LLVM 21
    (`amdgpu.buffer.oob.mode`) are plain metadata to it. The buffer OOB mode
    IREE 3.13 sets, 1 (relaxed), lets the AMDGPU backend merge accesses whose
    out-of-bounds behaviour then differs; the software device keeps the
    strict per-dword checks of each access, which a relaxed program cannot
    tell apart.
    """
    if ir_llvm_major <= BINDINGS_LLVM_MAJOR:
        return ir_text
    for attribute in NEWER_LLVM_ATTRIBUTES:
        ir_text = re.sub(rf" {attribute}\b", "", ir_text)
    lines = []
    for line in ir_text.split("\n"):
        code, comment = line, ""
        if ";" in line and '"' not in line:
            code, _, comment = line.partition(";")
            comment = ";" + comment
        if code.strip() and not code.lstrip().startswith("!"):
            if _FP_NAMED.search(code) or _FP_BITS.search(code) or _FP_DECIMAL.search(code):
                code = _fp_constants_to_hex(code)
            for newer, older in _DENORMAL_FPENV.items():
                code = code.replace(newer, older)
            if "denormal_fpenv(" in code:
                raise UnsupportedConstruct(f"denormal mode of a newer LLVM not known here: {code.strip()}")
            if "@llvm.masked." in code:
                code = _masked_to_llvm21(code)
        lines.append(code + comment)
    return "\n".join(lines)


def llvm21_parse_error(ir_text: str) -> str | None:
    """The parser's message when the bindings' LLVM cannot read `ir_text`, None
    when it can (or its library is not found): llvm-nanobind crashes on a
    parse error instead of raising, so the text is first parsed through
    LLVM's C API in that same library, which returns the message."""
    import ctypes
    import glob
    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(llvm.__file__)), "llvm_nanobind.libs", "libLLVM-*.so*"))
    if not libs:
        return None
    lib = ctypes.CDLL(libs[0])
    lib.LLVMContextCreate.restype = ctypes.c_void_p
    lib.LLVMContextDispose.argtypes = [ctypes.c_void_p]
    lib.LLVMCreateMemoryBufferWithMemoryRangeCopy.restype = ctypes.c_void_p
    lib.LLVMCreateMemoryBufferWithMemoryRangeCopy.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
    lib.LLVMParseIRInContext.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p),
                                         ctypes.POINTER(ctypes.c_void_p)]
    lib.LLVMDisposeModule.argtypes = [ctypes.c_void_p]
    lib.LLVMDisposeMessage.argtypes = [ctypes.c_void_p]
    data = ir_text.encode()
    context = lib.LLVMContextCreate()
    try:
        buffer = lib.LLVMCreateMemoryBufferWithMemoryRangeCopy(data, len(data), b"ir")
        module, message = ctypes.c_void_p(), ctypes.c_void_p()
        failed = lib.LLVMParseIRInContext(context, buffer, ctypes.byref(module), ctypes.byref(message))
        if module.value:
            lib.LLVMDisposeModule(module)
        text = ctypes.string_at(message.value).decode(errors="replace") if message.value else ""
        if message.value:
            lib.LLVMDisposeMessage(message)
        return (text.strip() or "a parse error") if failed else None
    finally:
        lib.LLVMContextDispose(context)


class UnsupportedConstruct(Exception):
    """The IR uses something the software device cannot run faithfully."""


@dataclasses.dataclass
class KernelInfo:
    name: str
    param_count: int
    sync: bool
    wave_size: int
    # Lanes are stackless coroutines (SOFTHIP_KERNEL_COROUTINE) instead of fibers.
    coroutine: bool = False
    # Why a synchronising kernel stays on fibers (the slower fallback).
    fibers_because: str | None = None
    # The coroutine lanes run as loops over the code between rendezvous
    # (_make_region_loops) rather than as LLVM coroutines.
    region_loops: bool = False


# Intrinsics with no effect on a CPU (memory is coherent, the host thread runs
# lanes in order).
NO_OP_INTRINSICS = {
    "llvm.amdgcn.s.waitcnt",
    "llvm.amdgcn.s.sleep",
    "llvm.amdgcn.s.setprio",
    "llvm.amdgcn.sched.barrier",
    "llvm.amdgcn.sched.group.barrier",
    "llvm.amdgcn.iglp.opt",
}

# Intrinsics that become a call of a runtime function of the same signature.
SCALAR_INTRINSICS = {
    "llvm.amdgcn.workitem.id.x": "softhip_rt_workitem_id_x",
    "llvm.amdgcn.workitem.id.y": "softhip_rt_workitem_id_y",
    "llvm.amdgcn.workitem.id.z": "softhip_rt_workitem_id_z",
    "llvm.amdgcn.workgroup.id.x": "softhip_rt_workgroup_id_x",
    "llvm.amdgcn.workgroup.id.y": "softhip_rt_workgroup_id_y",
    "llvm.amdgcn.workgroup.id.z": "softhip_rt_workgroup_id_z",
    "llvm.amdgcn.mbcnt.lo": "softhip_rt_mbcnt_lo",
    "llvm.amdgcn.mbcnt.hi": "softhip_rt_mbcnt_hi",
    "llvm.amdgcn.rcp.f32": "softhip_rt_rcp_f32",
    "llvm.amdgcn.rcp.f64": "softhip_rt_rcp_f64",
    "llvm.amdgcn.rsq.f32": "softhip_rt_rsq_f32",
    "llvm.amdgcn.rsq.f64": "softhip_rt_rsq_f64",
    "llvm.amdgcn.sqrt.f32": "softhip_rt_sqrt_f32",
    "llvm.amdgcn.exp2.f32": "softhip_rt_exp2_f32",
    "llvm.amdgcn.log.f32": "softhip_rt_log_f32",
    "llvm.amdgcn.fmed3.f32": "softhip_rt_fmed3_f32",
    "llvm.amdgcn.cvt.pk.fp8.f32": "softhip_rt_cvt_pk_fp8_f32",
    "llvm.amdgcn.cvt.pk.bf8.f32": "softhip_rt_cvt_pk_bf8_f32",
    "llvm.amdgcn.cvt.f32.fp8": "softhip_rt_cvt_f32_fp8",
    "llvm.amdgcn.cvt.f32.bf8": "softhip_rt_cvt_f32_bf8",
}

# Wave-level intrinsics: the runtime function takes the call-site id first.
RENDEZVOUS_INTRINSICS = {
    "llvm.amdgcn.s.barrier": "softhip_rt_barrier",
    "llvm.amdgcn.ds.bpermute": "softhip_rt_ds_bpermute",
    "llvm.amdgcn.readfirstlane.i32": "softhip_rt_readfirstlane_u32",
    "llvm.amdgcn.readfirstlane.i64": "softhip_rt_readfirstlane_u64",
    "llvm.amdgcn.readlane.i32": "softhip_rt_readlane_u32",
    "llvm.amdgcn.readlane.i64": "softhip_rt_readlane_u64",
    "llvm.amdgcn.ballot.i64": "softhip_rt_ballot",
}

# The HSA dispatch packet and the hidden kernel arguments of the launch, which
# ROCm's device library reads (IREE 3.13's __ockl_get_num_groups), filled by the
# runtime as ROCm fills them for a HIP launch (softhip_lane_runtime.c).
LAUNCH_RECORDS = {
    "llvm.amdgcn.dispatch.ptr": "softhip_rt_dispatch_ptr",
    "llvm.amdgcn.implicitarg.ptr": "softhip_rt_implicitarg_ptr",
}

# Other overloads of readlane / readfirstlane (rewrite_lane_read).
LANE_READ = re.compile(r"^llvm\.amdgcn\.read(first)?lane\.")

# Matrix instructions (MFMA on gfx9, one block; WMMA on gfx11) with the
# element kinds of the lane runtime: name -> (M (= N), K, kind). Each has three
# modifier operands (cbsz, abid, blgp) that must be 0: IREE emits no
# broadcasts.
F32, F16, BF16, I8, F64, FP8, BF8 = range(7)
MATRIX_INTRINSICS = {
    "llvm.amdgcn.mfma.f32.16x16x4f32": (16, 4, F32),
    "llvm.amdgcn.mfma.f32.32x32x2f32": (32, 2, F32),
    "llvm.amdgcn.mfma.f32.16x16x16f16": (16, 16, F16),
    "llvm.amdgcn.mfma.f32.32x32x8f16": (32, 8, F16),
    "llvm.amdgcn.mfma.f32.16x16x16bf16.1k": (16, 16, BF16),
    "llvm.amdgcn.mfma.f32.32x32x8bf16.1k": (32, 8, BF16),
    "llvm.amdgcn.mfma.i32.16x16x32.i8": (16, 32, I8),
    "llvm.amdgcn.mfma.i32.32x32x16.i8": (32, 16, I8),
    # gfx90a's forms (4 bytes of i8, 2 bf16 values per lane).
    "llvm.amdgcn.mfma.i32.16x16x16i8": (16, 16, I8),
    "llvm.amdgcn.mfma.i32.32x32x8i8": (32, 8, I8),
    "llvm.amdgcn.mfma.f32.16x16x8bf16": (16, 8, BF16),
    "llvm.amdgcn.mfma.f32.32x32x4bf16": (32, 4, BF16),
    "llvm.amdgcn.mfma.f64.16x16x4f64": (16, 4, F64),
    "llvm.amdgcn.mfma.f32.16x16x32.fp8.fp8": (16, 32, FP8),
    "llvm.amdgcn.mfma.f32.16x16x32.bf8.bf8": (16, 32, BF8),
    "llvm.amdgcn.mfma.f32.32x32x16.fp8.fp8": (32, 16, FP8),
    "llvm.amdgcn.mfma.f32.32x32x16.bf8.bf8": (32, 16, BF8),
}
MATRIX_MODIFIERS = 3
# gfx11 WMMA in wave32 (16 A and B values, 8 results per lane), by full
# name: other overloads (wave64's, gfx12's) have other layouts.
WMMA_INTRINSICS = {
    "llvm.amdgcn.wmma.f32.16x16x16.f16.v8f32.v16f16": F16,
    "llvm.amdgcn.wmma.f32.16x16x16.bf16.v8f32.v16i16": BF16,
}
WMMA_IU8 = "llvm.amdgcn.wmma.i32.16x16x16.iu8.v8i32.v4i32"

# A trap stops the kernel: the launch fails (softhip_rt_guarded / _trap).
TRAPS = {"llvm.trap", "llvm.debugtrap", "llvm.ubsantrap"}

BUFFER_LOAD = re.compile(r"^llvm\.amdgcn\.raw\.ptr\.buffer\.load\.")
BUFFER_STORE = re.compile(r"^llvm\.amdgcn\.raw\.ptr\.buffer\.store\.")
BUFFER_ATOMIC = re.compile(r"^llvm\.amdgcn\.raw\.ptr\.buffer\.atomic\.([a-z]+)\.")
ATOMIC_OPS = {
    "add": llvm.AtomicRMWBinOp.Add, "sub": llvm.AtomicRMWBinOp.Sub,
    "smin": llvm.AtomicRMWBinOp.Min, "umin": llvm.AtomicRMWBinOp.UMin,
    "smax": llvm.AtomicRMWBinOp.Max, "umax": llvm.AtomicRMWBinOp.UMax,
    "and": llvm.AtomicRMWBinOp.And, "or": llvm.AtomicRMWBinOp.Or,
    "xor": llvm.AtomicRMWBinOp.Xor, "swap": llvm.AtomicRMWBinOp.Xchg,
    "fadd": llvm.AtomicRMWBinOp.FAdd, "fmin": llvm.AtomicRMWBinOp.FMin,
    "fmax": llvm.AtomicRMWBinOp.FMax,
}
MAKE_BUFFER_RSRC = re.compile(r"^llvm\.amdgcn\.make\.buffer\.rsrc\.p8\.")

# Calls that may precede a kernel's first barrier without making it order
# anything (no memory access, no cross-lane effect).
PURE_BEFORE_BARRIER = re.compile(
    r"^llvm\.(amdgcn\.(workitem\.id|workgroup\.id|make\.buffer\.rsrc|s\.waitcnt)"
    r"|assume|[us](min|max)|abs)"
)

# Inline assembly IREE emits for gfx9 barriers.
ASM_BARRIER_LINE = re.compile(r"^\s*(s_waitcnt\s+\S.*|s_barrier)\s*$")


def _calls(function):
    for block in function.basic_blocks:
        for inst in block.instructions:
            if inst.opcode == llvm.Opcode.Call:
                yield inst


def _callee(call):
    value = call.called_value
    if not value.is_function:
        return None
    return call.block.function.module.get_function(value.name)


AMDGPU_KERNEL_CALLING_CONV = 91


def _calling_conv(function) -> int:
    # The bindings' enum has no member for amdgpu_kernel (91): it raises with
    # the number.
    try:
        return function.calling_conv.value
    except ValueError as error:
        return int(str(error).split()[0])


def _is_kernel(function) -> bool:
    return not function.is_declaration and _calling_conv(function) == AMDGPU_KERNEL_CALLING_CONV


def _kernels(module):
    return [f for f in module.functions if _is_kernel(f)]


class _Reach:
    """Which kernels reach each function (for error messages and flags)."""

    def __init__(self, module, kernels):
        callers: dict[str, set[str]] = {}
        for function in module.functions:
            if function.is_declaration:
                continue
            for call in _calls(function):
                callee = _callee(call)
                if callee is not None:
                    callers.setdefault(callee.name, set()).add(function.name)
        self._kernel_names = {k.name for k in kernels}
        self._callers = callers

    def kernels_reaching(self, function_name: str) -> list[str]:
        seen, stack, found = set(), [function_name], set()
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if name in self._kernel_names:
                found.add(name)
            stack.extend(self._callers.get(name, ()))
        return sorted(found)


def _unsupported(reach, function, what):
    kernels = reach.kernels_reaching(function.name) or [function.name]
    raise UnsupportedConstruct(
        f"{what} (in kernel {', '.join(kernels)}) has no faithful execution on the "
        "software HIP device"
    )


def _drop_assumes(module):
    for function in module.functions:
        for call in list(_calls(function)):
            callee = _callee(call)
            if callee is not None and callee.name == "llvm.assume":
                call.erase_from_parent()


def _internalize(module, kernels):
    kernel_names = {k.name for k in kernels}
    for function in module.functions:
        if not function.is_declaration and function.name not in kernel_names:
            function.linkage = llvm.Linkage.Internal
    for value in module.globals:
        if not value.is_declaration:
            value.linkage = llvm.Linkage.Internal


def _is_trivial_barrier(call) -> bool:
    """A barrier before which (in the entry block) or after which (to the
    return) the kernel does nothing that another lane could observe."""
    block = call.block
    function = block.function
    # Entry: only pure computations before it.
    if block == function.entry_block:
        inst = block.first_instruction
        pure = True
        while inst is not None and inst != call:
            if inst.opcode in (llvm.Opcode.Load, llvm.Opcode.Store, llvm.Opcode.AtomicRMW,
                               llvm.Opcode.AtomicCmpXchg, llvm.Opcode.Fence):
                pure = False
                break
            if inst.opcode == llvm.Opcode.Call:
                callee = _callee(inst)
                if callee is None or not PURE_BEFORE_BARRIER.match(callee.name):
                    pure = False
                    break
            inst = inst.next_instruction
        if pure:
            return True
    # Exit: nothing but waits between it and `ret void`.
    inst = call.next_instruction
    while inst is not None:
        if inst.opcode == llvm.Opcode.Ret:
            return True
        if inst.opcode != llvm.Opcode.Call:
            return False
        callee = _callee(inst)
        if callee is None or callee.name != "llvm.amdgcn.s.waitcnt":
            return False
        inst = inst.next_instruction
    return False


class _Rewriter:
    def __init__(self, module, kernels, reach):
        self.module = module
        self.kernels = kernels
        self.reach = reach
        self.types = module.types
        self.next_site = 1
        # Functions (by name) that call a rendezvous / a trap after rewriting.
        self.sync_functions: set[str] = set()
        self.trap_functions: set[str] = set()

    def runtime(self, name, ret, params, convergent=False):
        function = self.module.get_function(name)
        if function is None:
            function = self.module.add_function(name, self.types.function(ret, params))
            if convergent:
                function.attributes.add("convergent")
        return function

    def site(self):
        site = self.next_site
        self.next_site += 1
        return self.types.i32.constant(site)

    def check_inline_asm(self, call, function):
        text = call.called_value.inline_asm_asm_string
        # `;` starts a comment in AMDGPU assembly.
        lines = [line.split(";", 1)[0] for line in text.split("\n")]
        lines = [line for line in lines if line.strip()]
        if not all(ASM_BARRIER_LINE.match(line) for line in lines):
            _unsupported(self.reach, function, f"inline assembly `{text}`")
        return any(line.strip() == "s_barrier" for line in lines)

    def rewrite(self):
        # Decided on the untouched IR: the rewrites below add stores.
        self.trivial_barriers = set()
        for kernel in self.kernels:
            for call in _calls(kernel):
                if call.called_value.is_inline_asm:
                    is_barrier = self.check_inline_asm(call, kernel)
                else:
                    callee = _callee(call)
                    is_barrier = callee is not None and callee.name == "llvm.amdgcn.s.barrier"
                if is_barrier and _is_trivial_barrier(call):
                    self.trivial_barriers.add(call)
        # Defined functions only: rewriting erases declarations.
        defined = [f for f in self.module.functions if not f.is_declaration]
        for function in defined:
            for call in list(_calls(function)):
                value = call.called_value
                if value.is_inline_asm:
                    if self.check_inline_asm(call, function):
                        self.rewrite_barrier(call, function)
                    else:
                        call.erase_from_parent()
                    continue
                callee = _callee(call)
                if callee is None:
                    _unsupported(self.reach, function, "an indirect call")
                name = callee.name
                if name in TRAPS:
                    self.rewrite_trap(call, function)
                    continue
                if not name.startswith("llvm.amdgcn."):
                    continue
                if name in NO_OP_INTRINSICS:
                    call.erase_from_parent()
                elif name == "llvm.amdgcn.s.barrier":
                    self.rewrite_barrier(call, function)
                elif name in SCALAR_INTRINSICS:
                    self.replace_call(call, self.runtime(
                        SCALAR_INTRINSICS[name], callee.function_type.return_type,
                        callee.function_type.param_types), [])
                elif name in RENDEZVOUS_INTRINSICS:
                    self.rewrite_rendezvous(call, callee, function)
                elif name in LAUNCH_RECORDS:
                    self.rewrite_launch_record(call, LAUNCH_RECORDS[name])
                elif LANE_READ.match(name):
                    self.rewrite_lane_read(call, callee, function)
                elif name in MATRIX_INTRINSICS:
                    self.rewrite_matrix(call, callee, function)
                elif name.startswith(("llvm.amdgcn.update.dpp.", "llvm.amdgcn.mov.dpp.")):
                    self.rewrite_dpp(call, callee, function)
                elif name == WMMA_IU8:
                    self.rewrite_wmma_iu8(call, callee, function)
                elif name in WMMA_INTRINSICS:
                    self.rewrite_wmma(call, callee, function)
                elif MAKE_BUFFER_RSRC.match(name):
                    self.rewrite_make_rsrc(call, function)
                elif BUFFER_LOAD.match(name):
                    self.rewrite_buffer_load(call, callee)
                elif BUFFER_STORE.match(name):
                    self.rewrite_buffer_store(call, callee)
                elif BUFFER_ATOMIC.match(name) and (
                        BUFFER_ATOMIC.match(name).group(1) in ATOMIC_OPS
                        or BUFFER_ATOMIC.match(name).group(1) == "cmpswap"):
                    self.buffer_atomic(callee, BUFFER_ATOMIC.match(name).group(1))
                else:
                    _unsupported(self.reach, function, f"intrinsic `{name}`")

    def replace_call(self, call, target, leading_args):
        args = leading_args + [call.get_arg_operand(i) for i in range(call.num_arg_operands)]
        with self.module.create_builder(call) as builder:
            new = builder.call(target, args)
        if not call.type.is_void:
            call.replace_all_uses_with(new)
        call.erase_from_parent()
        return new

    def rewrite_trap(self, call, function):
        target = self.runtime("softhip_rt_trap", self.types.void, [])
        with self.module.create_builder(call) as builder:
            builder.call(target, [])
        call.erase_from_parent()
        self.trap_functions.add(function.name)

    def rewrite_barrier(self, call, function):
        if call in self.trivial_barriers:
            call.erase_from_parent()
            return
        target = self.runtime("softhip_rt_barrier", self.types.void, [self.types.i32], True)
        with self.module.create_builder(call) as builder:
            builder.call(target, [self.site()])
        call.erase_from_parent()
        self.sync_functions.add(function.name)

    def rewrite_rendezvous(self, call, callee, function):
        t = self.types
        name = callee.name
        ftype = callee.function_type
        if name == "llvm.amdgcn.ballot.i64":
            # ballot(i1) -> runtime takes the predicate as i32.
            target = self.runtime("softhip_rt_ballot", t.i64, [t.i32, t.i32], True)
            with self.module.create_builder(call) as builder:
                predicate = builder.zext(call.get_arg_operand(0), t.i32)
                new = builder.call(target, [self.site(), predicate])
            call.replace_all_uses_with(new)
            call.erase_from_parent()
        else:
            target = self.runtime(RENDEZVOUS_INTRINSICS[name], ftype.return_type,
                                  [t.i32] + list(ftype.param_types), True)
            self.replace_call(call, target, [self.site()])
        self.sync_functions.add(function.name)

    def rewrite_launch_record(self, call, runtime):
        """dispatch.ptr / implicitarg.ptr: the launch's records from the runtime
        (generic memory), as the constant address space pointer the IR uses."""
        target = self.runtime(runtime, self.types.ptr, [])
        with self.module.create_builder(call) as builder:
            record = builder.addr_space_cast(builder.call(target, []), call.type)
        call.replace_all_uses_with(record)
        call.erase_from_parent()

    def rewrite_lane_read(self, call, callee, function):
        """readlane / readfirstlane of another overload than i32 and i64 (newer
        LLVM overloads them on any type; IREE 3.13 reads f32): the value's bits
        through the i32 or i64 form, as the hardware moves a register's bits."""
        t = self.types
        first_lane = ".readfirstlane." in callee.name
        value_type = call.type
        bits = self.data_layout.size_of_type_in_bits(value_type)
        if bits > 64 or value_type.is_pointer or (value_type.is_vector and value_type.element_type.is_pointer):
            _unsupported(self.reach, function, f"`{callee.name}` on a {bits}-bit value")
        wide = t.i32 if bits <= 32 else t.i64
        runtime = "softhip_rt_read%slane_u%d" % ("first" if first_lane else "", 32 if bits <= 32 else 64)
        target = self.runtime(runtime, wide, [t.i32, wide] + ([] if first_lane else [t.i32]), True)
        int_type = t.int_n(bits)
        with self.module.create_builder(call) as builder:
            value = call.get_arg_operand(0)
            as_int = value if value.type == int_type else builder.bitcast(value, int_type)
            widened = as_int if bits in (32, 64) else builder.zext(as_int, wide)
            lane = [] if first_lane else [call.get_arg_operand(1)]
            result = builder.call(target, [self.site(), widened] + lane)
            narrowed = result if bits in (32, 64) else builder.trunc(result, int_type)
            read = narrowed if value_type == int_type else builder.bitcast(narrowed, value_type)
        call.replace_all_uses_with(read)
        call.erase_from_parent()
        self.sync_functions.add(function.name)

    def rewrite_matrix(self, call, callee, function):
        t = self.types
        m, k, kind = MATRIX_INTRINSICS[callee.name]
        count = call.num_arg_operands
        for i in range(count - MATRIX_MODIFIERS, count):
            operand = call.get_arg_operand(i)
            if not operand.is_constant_int or operand.const_zext_value != 0:
                _unsupported(self.reach, function,
                             f"`{callee.name}` with a non-zero broadcast/modifier operand")
        target = self.runtime("softhip_rt_mfma", t.void,
                              [t.i32, t.i32, t.i32, t.i32, t.ptr, t.ptr, t.ptr, t.ptr], True)
        operands = [call.get_arg_operand(i) for i in range(3)]
        self.call_with_slots(call, function, target,
                             [t.i32.constant(m), t.i32.constant(k), t.i32.constant(kind)], operands)

    def rewrite_wmma(self, call, callee, function):
        t = self.types
        kind = WMMA_INTRINSICS[callee.name]
        target = self.runtime("softhip_rt_wmma_16x16x16", t.void,
                              [t.i32, t.i32, t.ptr, t.ptr, t.ptr, t.ptr], True)
        operands = [call.get_arg_operand(i) for i in range(3)]
        self.call_with_slots(call, function, target, [t.i32.constant(kind)], operands)

    def rewrite_dpp(self, call, callee, function):
        """update.dpp(old, src, ctrl, row_mask, bank_mask, bound_ctrl) and
        mov.dpp(src, ...) (old undefined: 0) on values of up to 64 bits."""
        t = self.types
        updates = callee.name.startswith("llvm.amdgcn.update.dpp.")
        first = 1 if updates else 0
        value_type = call.type
        bits = self.data_layout.size_of_type_in_bits(value_type)
        if bits > 64 or value_type.is_vector and value_type.element_type.is_pointer:
            _unsupported(self.reach, function, f"`{callee.name}` on a {bits}-bit value")
        controls = []
        for i in range(first + 1, first + 5):
            operand = call.get_arg_operand(i)
            if not operand.is_constant_int:
                _unsupported(self.reach, function, f"`{callee.name}` with a non-constant control")
            controls.append(operand.const_zext_value)
        ctrl = controls[0]
        valid = (ctrl <= 0xFF or 0x101 <= ctrl <= 0x10F or 0x111 <= ctrl <= 0x11F
                 or 0x121 <= ctrl <= 0x12F or ctrl in (0x130, 0x134, 0x138, 0x13C, 0x140, 0x141,
                                                       0x142, 0x143) or 0x150 <= ctrl <= 0x16F)
        if not valid:
            _unsupported(self.reach, function, f"`{callee.name}` with DPP control {ctrl:#x}")
        target = self.runtime("softhip_rt_update_dpp", t.i64,
                              [t.i32, t.i64, t.i64, t.i32, t.i32, t.i32, t.i32, t.i32], True)
        int_type = t.int_n(bits)
        with self.module.create_builder(call) as builder:
            def widen(value):
                as_int = value if value.type == int_type else builder.bitcast(value, int_type)
                return as_int if bits == 64 else builder.zext(as_int, t.i64)
            old = widen(call.get_arg_operand(0)) if updates else t.i64.constant(0)
            src = widen(call.get_arg_operand(first))
            result = builder.call(target, [self.site(), old, src] +
                                  [t.i32.constant(c) for c in controls] +
                                  [t.i32.constant(1 if bits > 32 else 0)])
            narrowed = result if bits == 64 else builder.trunc(result, int_type)
            value = narrowed if value_type == int_type else builder.bitcast(narrowed, value_type)
        call.replace_all_uses_with(value)
        call.erase_from_parent()
        self.sync_functions.add(function.name)

    def rewrite_wmma_iu8(self, call, callee, function):
        # (i1 signed_a, A, i1 signed_b, B, C, i1 clamp)
        t = self.types
        flags = []
        for i in (0, 2, 5):
            operand = call.get_arg_operand(i)
            if not operand.is_constant_int:
                _unsupported(self.reach, function, f"`{callee.name}` with a non-constant flag")
            flags.append(t.i32.constant(operand.const_zext_value))
        target = self.runtime("softhip_rt_wmma_i32_16x16x16_iu8", t.void,
                              [t.i32, t.i32, t.i32, t.i32, t.ptr, t.ptr, t.ptr, t.ptr], True)
        operands = [call.get_arg_operand(i) for i in (1, 3, 4)]
        self.call_with_slots(call, function, target, flags, operands)

    def call_with_slots(self, call, function, target, leading, operands):
        """Calls target(site, *leading, &result, &operand...) with each value
        in a stack slot of the function, and replaces `call` by the result."""
        t = self.types
        result_type = call.type
        with self.module.create_builder(function.entry_block.first_instruction) as builder:
            slots = [builder.alloca(v.type) for v in operands]
            result_slot = builder.alloca(result_type)
        with self.module.create_builder(call) as builder:
            for value, slot in zip(operands, slots):
                builder.store(value, slot)
            generic = [builder.addr_space_cast(slot, t.ptr) for slot in [result_slot] + slots]
            builder.call(target, [self.site(), *leading, *generic])
            result = builder.load(result_type, result_slot)
        call.replace_all_uses_with(result)
        call.erase_from_parent()
        self.sync_functions.add(function.name)

    # Buffer resources: a resource is a pointer to a {base, num_records,
    # flags} record in the creating function's frame.
    def resource_type(self):
        t = self.types
        return t.struct([t.ptr, t.i32, t.i32])

    def rewrite_make_rsrc(self, call, function):
        t = self.types
        if call.block != function.entry_block:
            _unsupported(self.reach, function,
                         "a buffer resource made outside the function's entry block")
        base, stride, num_records, flags = (call.get_arg_operand(i) for i in range(4))
        if not stride.is_constant_int or stride.const_zext_value != 0:
            _unsupported(self.reach, function,
                         "a buffer resource with a stride (swizzled or structured buffer)")
        record_type = self.resource_type()
        with self.module.create_builder(function.entry_block.first_instruction) as builder:
            slot = builder.alloca(record_type)
            slot.name = RESOURCE_RECORD
            record = builder.addr_space_cast(slot, t.ptr)
        with self.module.create_builder(call) as builder:
            builder.store(builder.addr_space_cast(base, t.ptr), builder.struct_gep(record_type, record, 0))
            builder.store(num_records, builder.struct_gep(record_type, record, 1))
            builder.store(flags, builder.struct_gep(record_type, record, 2))
            resource = builder.addr_space_cast(record, call.type)
        call.replace_all_uses_with(resource)
        call.erase_from_parent()

    def resource_bounds(self, builder, rsrc, voffset, soffset, size):
        """(record, base, offset, whole access inside the buffer?) of an
        access of `size` bytes at voffset + soffset of a resource."""
        t = self.types
        record_type = self.resource_type()
        record = builder.addr_space_cast(rsrc, t.ptr)
        base = builder.load(t.ptr, builder.struct_gep(record_type, record, 0))
        num_records = builder.zext(builder.load(t.i32, builder.struct_gep(record_type, record, 1)), t.i64)
        offset = builder.add(builder.zext(voffset, t.i64), builder.zext(soffset, t.i64))
        end = builder.add(offset, t.i64.constant(size))
        inside = builder.icmp(llvm.IntPredicate.ULE, end, num_records)
        return record, base, offset, inside

    def replace_with_body(self, declaration):
        """A fresh internal function, with no attributes, in place of an
        intrinsic declaration: the declaration's attributes describe the
        hardware instruction (memory(argmem: ...)), not the body given here."""
        body = self.module.add_function("softhip." + declaration.name[len("llvm."):],
                                        declaration.function_type)
        body.linkage = llvm.Linkage.Internal
        declaration.replace_all_uses_with(body)
        declaration.erase()
        return body

    def buffer_access(self, callee, value_type, is_store):
        """Gives the intrinsic declaration `callee` a body: an access wholly
        inside the buffer goes straight to memory, others dword by dword."""
        t = self.types
        callee = self.replace_with_body(callee)
        params = callee.params
        value = params[0] if is_store else None
        rsrc, voffset, soffset = params[(1 if is_store else 0):][:3]
        size = self.data_layout.store_size_of_type(value_type)
        entry = callee.append_basic_block("entry")
        fast = callee.append_basic_block("inside")
        slow = callee.append_basic_block("partial")
        with self.module.create_builder(entry) as builder:
            # In the entry block: a static alloca, which lets the inliner put
            # the access into its caller (lanes' loops) at no cost.
            slot = builder.addr_space_cast(builder.alloca(value_type), t.ptr)
            record, base, offset, inside = self.resource_bounds(builder, rsrc, voffset, soffset, size)
            address = builder.gep(t.i8, base, [offset])
            builder.cond_br(inside, fast, slow)
        with self.module.create_builder(fast) as builder:
            if is_store:
                inst = builder.store(value, address)
                inst.alignment = 1
                builder.ret_void()
            else:
                loaded = builder.load(value_type, address)
                loaded.alignment = 1
                builder.ret(loaded)
        name = "softhip_rt_buffer_store_partial" if is_store else "softhip_rt_buffer_load_partial"
        partial = self.runtime(name, t.void, [t.ptr, t.i64, t.ptr, t.i32])
        with self.module.create_builder(slow) as builder:
            if is_store:
                builder.store(value, slot)
                builder.call(partial, [record, offset, slot, t.i32.constant(size)])
                builder.ret_void()
            else:
                builder.call(partial, [record, offset, slot, t.i32.constant(size)])
                builder.ret(builder.load(value_type, slot))

    def buffer_atomic(self, callee, op):
        """Gives a buffer atomic a body: inside the buffer an atomic on the
        address (sequentially consistent, so that workgroups on different
        host threads see each other); outside, no access and 0 returned."""
        t = self.types
        body = self.replace_with_body(callee)
        params = body.params
        operands = 2 if op == "cmpswap" else 1
        value = params[0]
        rsrc, voffset, soffset = params[operands:operands + 3]
        value_type = value.type
        size = self.data_layout.store_size_of_type(value_type)
        entry = body.append_basic_block("entry")
        inside = body.append_basic_block("inside")
        outside = body.append_basic_block("outside")
        with self.module.create_builder(entry) as builder:
            _record, base, offset, in_range = self.resource_bounds(builder, rsrc, voffset, soffset, size)
            builder.cond_br(in_range, inside, outside)
        seq_cst = llvm.AtomicOrdering.SequentiallyConsistent
        with self.module.create_builder(inside) as builder:
            address = builder.gep(t.i8, base, [offset])
            if op == "cmpswap":
                pair = builder.atomic_cmpxchg(address, params[1], value, seq_cst, seq_cst)
                builder.ret(builder.extract_value(pair, 0))
            else:
                builder.ret(builder.atomic_rmw(ATOMIC_OPS[op], address, value, seq_cst))
        with self.module.create_builder(outside) as builder:
            builder.ret(value_type.null())

    def rewrite_buffer_load(self, call, callee):
        if callee.is_declaration:
            self.buffer_access(callee, callee.function_type.return_type, False)

    def rewrite_buffer_store(self, call, callee):
        if callee.is_declaration:
            self.buffer_access(callee, callee.function_type.param_types[0], True)


def _functions_using(value, seen=None):
    """Names of the functions whose instructions use `value`, directly or
    through constant expressions."""
    seen = set() if seen is None else seen
    names = set()
    for user in value.users:
        if user.is_instruction:
            names.add(user.block.function.name)
        elif user.is_constant and not user.is_global_value and user not in seen:
            seen.add(user)
            names |= _functions_using(user, seen)
    return names


LDS = 3


def _memory_operand(inst):
    """(pointer, kind) of a load ('r'), store ('w') or atomic ('a'); None for
    anything else."""
    op = inst.opcode
    if op == llvm.Opcode.Load:
        return inst.get_operand(0), "r"
    if op == llvm.Opcode.Store:
        return inst.get_operand(1), "w"
    if op in (llvm.Opcode.AtomicRMW, llvm.Opcode.AtomicCmpXchg):
        return inst.get_operand(0), "a"
    return None


def _lds_pointer_operand(inst):
    """(pointer, kind) of an LDS access: kind 'r' load, 'w' store, 'a' atomic,
    '?' a call given an LDS pointer; None when `inst` touches no LDS."""
    access = _memory_operand(inst)
    if access is not None:
        pointer, kind = access
    elif inst.opcode == llvm.Opcode.Call and not inst.called_value.is_inline_asm:
        for i in range(inst.num_arg_operands):
            operand = inst.get_arg_operand(i)
            if operand.type.is_pointer and operand.type.pointer_address_space == LDS:
                return operand, "?"
        return None
    else:
        return None
    return (pointer, kind) if pointer.type.pointer_address_space == LDS else None


def _lds_area_and_index(pointer):
    """((global name, byte offset or None), index key) of an LDS address:
    IREE addresses LDS as a GEP over a global, or over an i8 GEP of one at a
    constant byte offset (one area per promoted buffer). Unknown shapes give
    (None, None): they overlap everything."""
    base, index = pointer, []
    # Nested GEPs (the scalarized masked accesses add `gep p, 0`) flatten into one
    # index list; constant zeros add nothing.
    while base.is_instruction and base.opcode == llvm.Opcode.GetElementPtr:
        index = [base.get_operand(i) for i in range(1, base.num_operands)] + index
        base = base.get_operand(0)
    index = tuple(_structure(v) for v in index if not (v.is_constant_int and v.const_zext_value == 0))
    if base.is_global_value:
        return (base.name, 0), index
    if base.is_constant_expr and base.const_opcode == llvm.Opcode.GetElementPtr:
        root = base.get_operand(0)
        offsets = [base.get_operand(i) for i in range(1, base.num_operands)]
        if root.is_global_value:
            if (base.gep_source_element_type.kind == llvm.TypeKind.Integer
                    and base.gep_source_element_type.int_width == 8 and len(offsets) == 1
                    and offsets[0].is_constant_int):
                return (root.name, offsets[0].const_sext_value), index
            return (root.name, None), index
    return None, None


ARITHMETIC = {llvm.Opcode.Add, llvm.Opcode.Sub, llvm.Opcode.Mul, llvm.Opcode.Shl,
              llvm.Opcode.LShr, llvm.Opcode.AShr, llvm.Opcode.And, llvm.Opcode.Or,
              llvm.Opcode.Xor, llvm.Opcode.ZExt, llvm.Opcode.SExt, llvm.Opcode.Trunc,
              llvm.Opcode.UDiv, llvm.Opcode.SDiv, llvm.Opcode.URem, llvm.Opcode.SRem}


def _structure(value, depth=12):
    """A key equal for index computations that compute the same thing from
    the same values (`add 0, %x` written twice), for comparing addresses."""
    if value.is_constant_int:
        return ("c", value.const_sext_value)
    if depth and value.is_instruction and value.opcode in ARITHMETIC:
        return (value.opcode.value,) + tuple(_structure(value.get_operand(i), depth - 1)
                                             for i in range(value.num_operands))
    return ("v", value)


class _LaneDependence:
    """Whether a value depends on the lane's id (workitem.id), through its
    operands and phis."""

    def __init__(self):
        self.memo = {}

    def __call__(self, value):
        if value in self.memo:
            return self.memo[value]
        self.memo[value] = False  # cycles through phis settle on False
        result = False
        if value.is_instruction:
            if value.opcode == llvm.Opcode.Call:
                callee = value.called_value
                result = (not callee.is_inline_asm and callee.is_function
                          and callee.name.startswith("llvm.amdgcn.workitem.id"))
            if not result and value.opcode != llvm.Opcode.Load:
                result = any(self(value.get_operand(i)) for i in range(value.num_operands)
                             if not value.get_operand(i).is_constant)
        self.memo[value] = result
        return result


def _mentions_lane(key, lane_dependent):
    """Whether a structural index key depends on the lane's id."""
    if isinstance(key, tuple):
        if len(key) == 2 and key[0] == "v":
            return lane_dependent(key[1])
        return any(_mentions_lane(part, lane_dependent) for part in key)
    return False


def _is_barrier_call(inst):
    if inst.opcode != llvm.Opcode.Call:
        return False
    value = inst.called_value
    if value.is_inline_asm:
        lines = [line.split(";", 1)[0].strip() for line in value.inline_asm_asm_string.split("\n")]
        return "s_barrier" in lines
    callee = _callee(inst)
    return callee is not None and callee.name == "llvm.amdgcn.s.barrier"


def _overlap(a, b):
    if a is None or b is None:
        return True
    return a[0] == b[0] and (a[1] is None or b[1] is None or a[1] == b[1])


GLOBAL = 1
_BUFFER_ACCESS = re.compile(r"llvm\.amdgcn\.raw\.ptr\.buffer\.(load|store|atomic)")


def _lane_structure(value, lanes, depth=12):
    """_structure, except that an induction variable (a phi of a start value
    and itself plus a constant step) is keyed by its start and step, so that
    two loops walking a lane's elements the same way (IREE's workgroup-strided
    loops: start at the lane, step by the workgroup size) give one key. Only
    steps of at least `lanes` (0: unknown) are keyed so: then the lanes' element
    sets stay disjoint."""
    if value.is_constant_int:
        return ("c", value.const_sext_value)
    if depth and value.is_instruction and value.opcode == llvm.Opcode.PHI and value.num_operands == 2 and lanes:
        for start_at, step_at in ((0, 1), (1, 0)):
            start, step = value.get_operand(start_at), value.get_operand(step_at)
            if (step.is_instruction and step.opcode == llvm.Opcode.Add and step.num_operands == 2
                    and step.get_operand(0) == value and step.get_operand(1).is_constant_int
                    and step.get_operand(1).const_sext_value >= lanes):
                return ("iv", _lane_structure(start, lanes, depth - 1), step.get_operand(1).const_sext_value)
    if depth and value.is_instruction and value.opcode in ARITHMETIC:
        return (value.opcode.value,) + tuple(_lane_structure(value.get_operand(i), lanes, depth - 1)
                                             for i in range(value.num_operands))
    return ("v", value)


def _global_access(inst, lanes=0):
    """(area, index key, kind) of a global memory access after the buffer fat
    pointer lowering: a raw buffer load/store/atomic (the area is the kernel
    argument the buffer resource was made from, the index its constant base
    offsets and the access's offset) or a plain load/store of an address space
    1 pointer (the argument under its GEPs, their indices); None when `inst`
    touches no global memory. An area None overlaps every area."""
    op = inst.opcode
    if op == llvm.Opcode.Call and not inst.called_value.is_inline_asm and inst.called_value.is_function:
        match = _BUFFER_ACCESS.match(inst.called_value.name)
        if not match:
            return None
        kind = {"load": "r", "store": "w", "atomic": "a"}[match.group(1)]
        # load(rsrc, voffset, soffset, aux); store(data, rsrc, voffset, soffset, aux);
        # atomics take their data operand(s) first: the resource is the first ptr addrspace(8).
        operands = [inst.get_arg_operand(i) for i in range(inst.num_arg_operands)]
        position = next((i for i, v in enumerate(operands)
                         if v.type.is_pointer and v.type.pointer_address_space == 8), None)
        if position is None or position + 2 >= len(operands):
            return None, None, kind
        resource, offsets = operands[position], operands[position + 1:position + 3]
        base = None
        if resource.is_instruction and resource.opcode == llvm.Opcode.Call:
            callee = resource.called_value
            if callee.is_function and callee.name.startswith("llvm.amdgcn.make.buffer.rsrc"):
                base = resource.get_arg_operand(0)
        if base is None:
            return None, None, kind
        area, base_index = _global_area_and_index(base, lanes)
        return area, base_index + tuple(_lane_structure(v, lanes) for v in offsets), kind
    access = _memory_operand(inst)
    if access is None:
        return None
    pointer, kind = access
    if not pointer.type.is_pointer or pointer.type.pointer_address_space != GLOBAL:
        return None
    area, index = _global_area_and_index(pointer, lanes)
    return area, index, kind


def _global_area_and_index(pointer, lanes=0):
    """(the kernel argument under a global pointer's GEPs, their index key);
    (None, ()) for any other root."""
    base, index = pointer, []
    while base.is_instruction and base.opcode == llvm.Opcode.GetElementPtr:
        index = [base.get_operand(i) for i in range(1, base.num_operands)] + index
        base = base.get_operand(0)
    key = tuple(_lane_structure(v, lanes) for v in index if not (v.is_constant_int and v.const_zext_value == 0))
    return ((base, None) if base.is_argument else None), key


ONE_LANE_BLOCK = "softhip.one_lane"
# What a lane-uniform stretch of a kernel may call: intrinsics whose result is
# the same in every lane given the same operands.
_UNIFORM_CALLS = re.compile(
    r"^llvm\.(?!amdgcn\.)|^llvm\.amdgcn\.(workgroup\.id|make\.buffer\.rsrc|raw\.ptr\.buffer|s\.waitcnt|"
    r"rcp|rsq|sqrt|exp2|log|fmed3|cvt|dispatch\.ptr|implicitarg\.ptr|sched|s\.sleep|s\.setprio|iglp)")
# What makes a value differ between lanes.
_LANE_SOURCES = re.compile(r"^llvm\.amdgcn\.(workitem\.id|mbcnt)")


def _run_uniform_tails_on_one_lane(module, kernels, workgroup_dims):
    """A GPU runs a wave's lanes in lockstep; the software device runs a
    workgroup's lanes one after another between barriers. Where every lane
    does the same work on the same data (IREE's FFT stages, sorts and scans:
    each lane repeats the whole computation, in place), lockstep lanes act as
    one lane and lanes one after another repeat it, which for in-place work
    computes something else. So the lane-uniform tail of a kernel, a part
    that every path from the entry reaches, outside loops, with no value that
    differs between lanes and no barrier, runs on lane 0 alone: after a
    barrier (what the lanes stored before it is then visible, as lockstep
    makes it), the other lanes return. Where the rest of the kernel has no
    barrier, the last lane runs the tail instead, with no barrier: the
    software device runs such a workgroup's lanes one after another in order
    (x fastest; software-hip's simt.rs), so the others are done by then, and
    the kernel stays a plain loop of lanes rather than fibers."""
    t = module.types

    for kernel in kernels:
        if not _calls_are_lane_safe(kernel, set()):
            continue
        blocks = list(kernel.basic_blocks)
        lane_dependent = _lane_varying(kernel)[0]
        successors = {b: list(b.successors) for b in blocks}
        entry = blocks[0]
        for candidate in blocks:
            tail = _blocks_from([candidate])
            outside = [b for b in blocks if b not in tail and candidate in successors[b]]
            if candidate == entry:
                if any(candidate in successors[b] for b in tail):
                    continue  # the entry as a loop header
            elif not outside or any(not successors[b] for b in _blocks_from([entry], without=candidate)):
                continue  # a path from the entry returns without reaching it
            if any(inst in lane_dependent or (_is_barrier_call(inst) and not _is_trivial_barrier(inst))
                   for b in tail for inst in b.instructions):
                continue  # (barriers at the kernel's very start or end order nothing)
            leave = kernel.append_basic_block("softhip.other_lanes")
            with module.create_builder(leave) as builder:
                builder.ret_void()
            if candidate == entry:
                first = candidate.first_non_phi
                first = _hoist_buffer_resources(candidate, first)
                with module.create_builder(first) as builder:
                    other_lane = _other_lane(builder, module, t)
                one_lane = candidate.split_basic_block(first, ONE_LANE_BLOCK)
                candidate.terminator.erase_from_parent()
                with module.create_builder(candidate) as builder:
                    builder.cond_br(other_lane, leave, one_lane)
            else:
                # Entered once (the tail never leads back): a block on the edges
                # from outside waits for the lanes, then lets lane 0 in.
                gate = kernel.append_basic_block(ONE_LANE_BLOCK + ".gate")
                _route_through(module, candidate, outside, gate)
                dims = workgroup_dims.get(kernel.name)
                head_barrier = any(_is_barrier_call(inst) and not _is_trivial_barrier(inst)
                                   for b in blocks if b not in tail for inst in b.instructions)
                with module.create_builder(gate) as builder:
                    if dims is None or head_barrier:
                        builder.call(_declared(module, "llvm.amdgcn.s.barrier", t.function(t.void, [])), [])
                        other_lane = _other_lane(builder, module, t)
                    else:
                        other_lane = _other_lane(builder, module, t, last=dims)
                    builder.cond_br(other_lane, leave, candidate)
            break


def _other_lane(builder, module, t, last=None):
    """Whether this lane is not lane 0 (or, given the workgroup's dims, not
    the last lane)."""
    ids = [builder.call(_declared(module, f"llvm.amdgcn.workitem.id.{axis}", t.function(t.i32, [])), [])
           for axis in "xyz"]
    if last is not None:
        ids = [builder.xor(i, t.i32.constant(d - 1)) for i, d in zip(ids, last)]
    return builder.icmp(llvm.IntPredicate.NE, builder.or_(builder.or_(ids[0], ids[1]), ids[2]),
                        t.i32.constant(0))


def _route_through(module, block, outside, gate):
    """Sends the edges from the `outside` blocks into `block` through the empty
    `gate`: the gate merges their phi values, the block's phis (rebuilt: the
    bindings cannot change a phi's incoming block) take the gate's."""
    for phi in list(block.phis):
        pairs = [(phi.get_incoming_value(i), phi.get_incoming_block(i)) for i in range(phi.num_incoming)]
        from_outside = [(v, b) for v, b in pairs if any(b == o for o in outside)]
        if len(from_outside) == 1:
            merged = from_outside[0][0]
        else:
            with module.create_builder(gate) as builder:
                merged = builder.phi(phi.type)
            for value, incoming in from_outside:
                merged.add_incoming(value, incoming)
        with module.create_builder(block.first_instruction) as builder:
            replacement = builder.phi(phi.type)
        replacement.add_incoming(merged, gate)
        for value, incoming in pairs:
            if not any(incoming == o for o in outside):
                replacement.add_incoming(value, incoming)
        phi.replace_all_uses_with(replacement)
        phi.erase_from_parent()
    for before in outside:
        before.terminator.replace_uses_of_with(block.as_value(), gate.as_value())


def _hoist_buffer_resources(block, first):
    """Moves the block's buffer resources (and the address arithmetic they are
    made from) before `first`, where every lane makes them: the rewriting of
    resources wants them where the kernel starts. Returns the instruction the
    one-lane part starts at."""
    order = list(block.instructions)
    start = next(i for i, inst in enumerate(order) if inst == first)
    later = order[start:]
    needed = []

    def need(value):
        if not value.is_instruction or value.block != block or value in needed:
            return True
        if not any(value == inst for inst in later):
            return True  # before `first` already
        if value.opcode == llvm.Opcode.Call:
            callee = value.called_value
            if not (callee.is_function and callee.name.startswith("llvm.amdgcn.make.buffer.rsrc")):
                return False
        elif value.opcode not in (llvm.Opcode.GetElementPtr, llvm.Opcode.AddrSpaceCast, llvm.Opcode.BitCast) \
                and value.opcode not in ARITHMETIC:
            return False
        if not all(need(value.get_operand(i)) for i in range(value.num_operands)):
            return False
        needed.append(value)
        return True

    for inst in later:
        if (inst.opcode == llvm.Opcode.Call and inst.called_value.is_function
                and inst.called_value.name.startswith("llvm.amdgcn.make.buffer.rsrc")):
            need(inst)
    rest = [inst for inst in later if not any(inst == n for n in needed)]
    for inst in later:  # in their order, before the first instruction that stays
        if any(inst == n for n in needed):
            inst.move_before(rest[0])
    return rest[0]


def _calls_are_lane_safe(function, seen):
    """No wave operation, inline assembly or lane id reached from `function`
    but through the lane-id intrinsics themselves (which
    _lane_dependent_instructions follows)."""
    if function.name in seen:
        return True
    seen.add(function.name)
    for block in function.basic_blocks:
        for inst in block.instructions:
            if inst.opcode != llvm.Opcode.Call:
                continue
            value = inst.called_value
            if _is_barrier_call(inst):
                continue  # also gfx11's inline `s_barrier`
            if value.is_inline_asm or not value.is_function:
                return False
            name = value.name
            if _LANE_SOURCES.match(name) or _UNIFORM_CALLS.match(name):
                continue
            if name.startswith("llvm."):
                return False
            callee = function.module.get_function(name)
            if callee is None or callee.is_declaration or not _calls_are_lane_safe(callee, seen):
                return False
    return True


def _lane_dependent_instructions(function, seeds=()):
    """The instructions whose value may differ between lanes: the lane ids
    (and `seeds`), what is computed from them (through phis and loads too),
    and loads of private memory (an alloca's contents are per lane)."""
    dependent = set(seeds)
    instructions = [inst for block in function.basic_blocks for inst in block.instructions]
    changed = True
    while changed:
        changed = False
        for inst in instructions:
            if inst in dependent:
                continue
            hit = False
            if inst.opcode == llvm.Opcode.Call and inst.called_value.is_function and _LANE_SOURCES.match(inst.called_value.name):
                hit = True
            elif inst.opcode == llvm.Opcode.Alloca:
                hit = True
            else:
                hit = any(inst.get_operand(i) in dependent for i in range(inst.num_operands)
                          if inst.get_operand(i).is_instruction)
            if hit:
                dependent.add(inst)
                changed = True
    return dependent


def _product(dims):
    return dims[0] * dims[1] * dims[2]


def _workgroup_dims(ir_text: str) -> dict[str, tuple[int, int, int]]:
    """The `!reqd_work_group_size` of each kernel that has one (read from the
    text: the bindings cannot read a metadata node's integers)."""
    nodes = {m.group(1): m.group(2) for m in re.finditer(r"^(![0-9]+) = !\{(i32 \d+, i32 \d+, i32 \d+)\}", ir_text, re.M)}
    sizes = {}
    for m in re.finditer(r"^define [^@\n]*@\"?([\w.$-]+)\"?\(.*!reqd_work_group_size (![0-9]+)", ir_text, re.M):
        dims = re.findall(r"i32 (\d+)", nodes.get(m.group(2), ""))
        if len(dims) == 3:
            sizes[m.group(1)] = (int(dims[0]), int(dims[1]), int(dims[2]))
    return sizes


def _blocks_from(starts, without=None):
    """The blocks reachable from `starts` (them included), not through `without`."""
    seen, stack = set(), list(starts)
    while stack:
        block = stack.pop()
        if block in seen or (without is not None and block == without):
            continue
        seen.add(block)
        stack.extend(block.successors)
    return seen


def _check_global_lockstep(module, reach, workgroup_dims):
    """Global memory between two barriers, as _check_lds_lockstep for LDS: the
    lanes of a workgroup run one after another there, a GPU runs a wave's lanes
    in lockstep. A kernel whose lanes all read and rewrite the same elements in
    place (IREE's FFT stages: each lane repeats the whole butterfly), or read
    what other lanes store before any barrier, computes something else when the
    lanes run one after another: an element at an address that does not depend
    on the lane, read and written by lanes between two barriers outside a
    one-lane part. _run_lanes_in_lockstep orders such accesses as lockstep
    lanes do, or refuses the kernel. Kernel arguments do not alias (IREE marks
    them noalias); different workgroups never share a barrier interval on a GPU
    either."""
    lane_dependent = _LaneDependence()
    for function in module.functions:
        if function.is_declaration:
            continue
        kernels = reach.kernels_reaching(function.name) or [function.name]
        lanes = max(_product(workgroup_dims.get(k, (0, 0, 0))) for k in kernels)
        if lanes == 1:
            continue  # one lane per workgroup: nothing runs beside it
        one_lane = _one_lane_blocks(function)
        _run_lanes_in_lockstep(
            module, function,
            lambda: _lockstep_conflict(function, lambda inst: _global_access(inst, lanes), lane_dependent,
                                       one_lane, lane_partitioned=True),
            lambda conflict: _refuse_lockstep("global memory", "a wave's lanes", kernels, conflict))


def _check_lds_lockstep(module, reach):
    """The software device runs the lanes of a workgroup one after another
    between two barriers; a GPU runs a wave's lanes in lockstep, so a kernel may
    (IREE's exclusive scan does) have lanes read LDS that other lanes write with
    no barrier in between. On every path between barriers (loops included),
    two accesses of one LDS area of different kinds (load, store, atomic)
    must be at the same lane-dependent address (each lane on its own slot);
    anything else is ordered as lockstep lanes order it
    (_run_lanes_in_lockstep) or refused instead of racing silently."""
    lane_dependent = _LaneDependence()

    def access_of(inst):
        access = _lds_pointer_operand(inst)
        if access is None:
            return None
        pointer, kind = access
        area, index = _lds_area_and_index(pointer)
        return area, index, kind

    for function in module.functions:
        if function.is_declaration:
            continue
        kernels = reach.kernels_reaching(function.name) or [function.name]
        one_lane = _one_lane_blocks(function)
        _run_lanes_in_lockstep(
            module, function, lambda: _lockstep_conflict(function, access_of, lane_dependent, one_lane),
            lambda conflict: _refuse_lockstep("workgroup memory (LDS)", "lanes", kernels, conflict))


def _one_lane_blocks(function):
    """The blocks that _run_uniform_tails_on_one_lane gave to one lane (and
    its gate, where the others leave)."""
    return _blocks_from(block for block in function.basic_blocks if block.name.startswith(ONE_LANE_BLOCK))


def _run_lanes_in_lockstep(module, function, find_conflict, refuse):
    """Lockstep lanes finish one memory access before any of them starts the
    next, so what one lane stores is seen by the others' later accesses in
    program order, and what they all read is read before any of them writes.
    Where two accesses between barriers would be ordered otherwise by lanes
    run one after another (`find_conflict`), a barrier before the later one
    gives that order, if every lane of the workgroup runs it as often as the
    others (no branch or loop exit on a lane-dependent value controls its
    block; a barrier is not allowed elsewhere): for lanes in one wave this is
    their lockstep order, for lanes in different waves (which race on a GPU)
    one of the orders a GPU may take. Repeats until no conflict is left;
    anything else is `refuse`d. A kernel's own body only: a called function
    may run on some lanes only."""
    divergent = None
    inserted = False
    while True:
        conflict = find_conflict()
        if conflict is None:
            break
        later = conflict[2]
        if not _is_kernel(function):
            refuse(conflict)
        if divergent is None:
            divergent = _lane_varying(function)[1]
        if later.block in divergent or _is_barrier_call(later.prev_instruction or later):
            refuse(conflict)
        if os.environ.get("SOFTHIP_DEBUG_LDS"):
            print(f"{function.name}: a barrier for lockstep before", later, file=sys.stderr)
        _barrier_before(module, later)
        inserted = True
    if inserted:
        # A uniform tail that the last lane runs without a barrier counted on
        # the rest of the kernel being a plain loop of lanes: wait for them.
        for block in function.basic_blocks:
            if block.name.startswith(ONE_LANE_BLOCK + ".gate") and not any(
                    _is_barrier_call(inst) for inst in block.instructions):
                _barrier_before(module, block.first_non_phi)


def _barrier_before(module, inst):
    t = module.types
    with module.create_builder(inst) as builder:
        builder.call(_declared(module, "llvm.amdgcn.s.barrier", t.function(t.void, [])), [])


def _lane_varying(function):
    """(the instructions whose value may differ between lanes, the blocks
    that some lanes may run and others not, or more often). A block is
    divergent when a conditional branch on a lane-varying value controls it
    (it is reached from one of the branch's successors before a block that
    every path from the branch passes, a post-dominator). Lane dependence
    follows control as well as operands: besides what
    _lane_dependent_instructions finds, a value computed in a divergent
    block, a phi joining paths lanes may have taken differently, an atomic's
    result (each lane its own ticket) and a call that may read the lane or
    do atomics (inline assembly, a wave or other non-uniform intrinsic, a
    function not _calls_are_lane_safe or with atomics) vary; iterated until
    neither set grows."""
    blocks = list(function.basic_blocks)
    successors = {b: list(b.successors) for b in blocks}
    predecessors = {b: [] for b in blocks}
    for block in blocks:
        for successor in successors[block]:
            predecessors[successor].append(block)
    every = set(blocks)
    # Post-dominators (each block's set), iterated to a fixed point.
    post = {b: ({b} if not successors[b] else set(every)) for b in blocks}
    changed = True
    while changed:
        changed = False
        for block in reversed(blocks):
            if not successors[block]:
                continue
            merged = {block} | set.intersection(*(post[s] for s in successors[block]))
            if merged != post[block]:
                post[block] = merged
                changed = True
    varying = [inst for block in blocks for inst in block.instructions
               if inst.opcode in (llvm.Opcode.AtomicRMW, llvm.Opcode.AtomicCmpXchg)
               or (inst.opcode == llvm.Opcode.Call and _call_may_vary(inst))]
    dependent = _lane_dependent_instructions(function, varying)

    def lane_branch(block):
        if len(set(successors[block])) < 2:
            return False
        condition = block.terminator.get_operand(0)
        return condition.is_instruction and condition in dependent

    while True:
        regions = {}
        for block in blocks:
            if not lane_branch(block):
                continue
            stop = post[block] - {block}
            region = set()
            stack = [s for s in successors[block] if s not in stop]
            while stack:
                reached = stack.pop()
                if reached in region or reached in stop:
                    continue
                region.add(reached)
                stack.extend(successors[reached])
            regions[block] = region
        divergent = set().union(*regions.values())
        marked = {inst for block in divergent for inst in block.instructions}
        # A phi where paths from a lane-dependent branch meet again, taking
        # different values in from them (one value in from all of them, like
        # a loop's exit edge, is the same in every lane).
        for branch, region in regions.items():
            inside = region | {branch}
            for block in blocks:
                if block in region or not any(p in inside for p in predecessors[block]):
                    continue
                for phi in block.phis:
                    values = [phi.get_incoming_value(i) for i in range(phi.num_incoming)
                              if phi.get_incoming_block(i) in inside]
                    if any(v != values[0] for v in values[1:]):
                        marked.add(phi)
        if marked <= dependent:
            return dependent, divergent
        dependent = _lane_dependent_instructions(function, dependent | marked)


def _call_may_vary(call) -> bool:
    """Whether a call's result or effect may differ between lanes given the
    same operands (see _lane_varying)."""
    if _is_barrier_call(call):
        return False  # no value; barriers are judged on their own
    value = call.called_value
    if value.is_inline_asm or not value.is_function:
        return True
    name = value.name
    if _ATOMIC_CALLS.match(name):
        return True
    if name.startswith("llvm."):
        return not (_UNIFORM_CALLS.match(name) or _LANE_SOURCES.match(name))
    callee = _callee(call)
    if callee is None or callee.is_declaration:
        return True
    return not _calls_are_lane_safe(callee, set()) or _reaches(callee, _differs_between_lanes, set())


# Atomics as intrinsics (global memory after the buffer fat pointer lowering).
_ATOMIC_CALLS = re.compile(r"^llvm\.amdgcn\.(raw|struct)(\.ptr)?\.buffer\.atomic|^llvm\.amdgcn\.global\.atomic|"
                           r"^llvm\.amdgcn\.(flat|ds)\.(atomic|fadd|fmin|fmax)")


def _differs_between_lanes(inst) -> bool:
    """An atomic (each lane its own result and effect) or a read of the
    lane's id or its position in the wave (_LANE_SOURCES)."""
    if inst.opcode in (llvm.Opcode.AtomicRMW, llvm.Opcode.AtomicCmpXchg):
        return True
    if inst.opcode != llvm.Opcode.Call or not inst.called_value.is_function:
        return False
    name = inst.called_value.name
    return bool(_ATOMIC_CALLS.match(name) or _LANE_SOURCES.match(name))


def _reaches(function, found, seen) -> bool:
    """Whether `function` or a function it calls has an instruction `found`
    holds for."""
    if function.name in seen:
        return False
    seen.add(function.name)
    for block in function.basic_blocks:
        for inst in block.instructions:
            if found(inst):
                return True
            if inst.opcode == llvm.Opcode.Call:
                callee = _callee(inst)
                if callee is not None and not callee.is_declaration and _reaches(callee, found, seen):
                    return True
    return False


def _refuse_lockstep(memory, lanes, kernels, conflict):
    if os.environ.get("SOFTHIP_DEBUG_LDS"):
        print(f"{memory} conflict:", *conflict, file=sys.stderr)
    raise UnsupportedConstruct(
        f"{memory} written and read by different lanes between two barriers (in kernel "
        f"{', '.join(kernels)}): the kernel relies on {lanes} running in lockstep where not every "
        "lane runs the code (a branch or loop that depends on the lane) or in a called function; "
        "the software HIP device runs lanes in lockstep only where all of them run the accesses")


def _lockstep_conflict(function, access_of, lane_dependent, skip, lane_partitioned=False):
    """Two accesses on a path between barriers (loops included) that lanes run
    one after another would order differently from lockstep lanes: of one
    area (`access_of(inst)` gives area, index key, kind: 'r', 'w', 'a', or
    '?' for a call given the memory), of different kinds, not both at the
    same lane-dependent index; or two stores, one at a lane-dependent index,
    one at an index that does not depend on the lane.
    Blocks in `skip` run on one lane. With
    `lane_partitioned`, any two lane-dependent indices are taken as each
    lane's own elements (IREE partitions global memory between lanes: a lane
    reads one accumulator row and writes the next of its own), so only an
    access at a lane-independent index conflicts. Returns the two as
    (kind, area, index, private) tuples and the later access's instruction,
    or None."""
    blocks = list(function.basic_blocks)
    entry_state = {b: frozenset() for b in blocks}
    changed = True
    while changed:
        changed = False
        for block in blocks:
            if block in skip:
                continue
            state = set(entry_state[block])
            for inst in block.instructions:
                if _is_barrier_call(inst):
                    state = set()
                    continue
                access = access_of(inst)
                if access is None:
                    continue
                area, index, kind = access
                private = index is not None and _mentions_lane(index, lane_dependent)
                for other in state:
                    other_kind, other_area, other_index, other_private = other
                    if not _overlap(area, other_area):
                        continue
                    if kind == other_kind and kind in ("r", "a"):
                        continue  # reads in any order read the same; atomics race on a GPU too
                    if private and other_private and "?" not in (kind, other_kind) and (
                            lane_partitioned or index == other_index):
                        continue
                    if kind == other_kind == "w" and private == other_private:
                        # Lane-independent stores: the last in program order stays either way.
                        # Two at different lane-dependent indices are taken as each lane's own
                        # elements (IREE's tile copies), as before: not checked.
                        continue
                    return (kind, area, index, private), other, inst
                state.add((kind, area, index, private))
            for successor in block.successors:
                merged = entry_state[successor] | state
                if merged != entry_state[successor]:
                    entry_state[successor] = frozenset(merged)
                    changed = True
    return None


def _make_lds_thread_local(module):
    t = module.types
    for value in list(module.globals):
        if value.type.pointer_address_space != 3:
            continue
        if value.name == DYNAMIC_LDS_NAME:
            whole = module.add_global_in_address_space(
                t.i8.array(MAX_LDS_BYTES), DYNAMIC_LDS_NAME + ".softhip", 3)
            whole.initializer = t.i8.array(MAX_LDS_BYTES).null()
            whole.alignment = 16
            whole.linkage = llvm.Linkage.Internal
            whole.is_thread_local = True
            value.replace_all_uses_with(whole)
            value.delete_global()
            continue
        if value.is_declaration:
            raise UnsupportedConstruct(f"external LDS variable `{value.name}`")
        value.initializer = value.global_value_type.null()
        value.is_thread_local = True


# The rendezvous whose runtime function only posts the lane's part and returns
# (a service call; the result comes after the suspension), so that the lane can
# be a coroutine suspended right after it.
SIMPLE_RENDEZVOUS = frozenset(RENDEZVOUS_INTRINSICS.values())
# Runtime functions that rendezvous in the middle of their work, split into
# phases with the same parameters: every phase but the last posts a rendezvous
# (the lane suspends after it); the last one (None: nothing left) gives the
# result. On fibers the whole function runs them in one call.
PHASED_RENDEZVOUS = {
    "softhip_rt_mfma": ("softhip_rt_mfma__deposit", "softhip_rt_mfma__compute", None),
    "softhip_rt_wmma_16x16x16": ("softhip_rt_wmma_16x16x16__deposit",
                                 "softhip_rt_wmma_16x16x16__compute", None),
    "softhip_rt_wmma_i32_16x16x16_iu8": ("softhip_rt_wmma_i32_16x16x16_iu8__deposit",
                                         "softhip_rt_wmma_i32_16x16x16_iu8__compute", None),
    "softhip_rt_update_dpp": ("softhip_rt_update_dpp__ballot", "softhip_rt_update_dpp__fetch",
                              "softhip_rt_update_dpp__select"),
}


def _declared(module, name, ftype):
    """The module's function `name`, declared with `ftype` if it has none."""
    return module.get_function(name) or module.add_function(name, ftype)


def _fiber_reason(kernel, reach, sync_functions) -> str | None:
    """Why a synchronising kernel's lanes must stay on fibers (None: they can
    be coroutines): every rendezvous it reaches must be a simple one in its
    own body, since a coroutine suspends only in its own body."""
    if os.environ.get(COROUTINE_LANES_ENV, "1") == "0":
        return f"{COROUTINE_LANES_ENV}=0"
    for name in sorted(sync_functions):
        if name != kernel.name and kernel.name in reach.kernels_reaching(name):
            return f"it reaches a rendezvous in function `{name}`, not in its own body"
    for call in _calls(kernel):
        callee = _callee(call)
        if (callee is not None and callee.name.startswith("softhip_rt_") and "convergent" in callee.attributes
                and callee.name not in SIMPLE_RENDEZVOUS and callee.name not in PHASED_RENDEZVOUS):
            return f"`{callee.name}` has no coroutine form"
    return None


# Lane runtime functions that read the lane's context, each with a form
# taking it as a first parameter (`name__of`), which coroutine kernels call.
LANE_CONTEXT_FORMS = frozenset(
    ["softhip_rt_mbcnt_lo", "softhip_rt_mbcnt_hi"]
    + [f"softhip_rt_{kind}_id_{axis}" for kind in ("workitem", "workgroup") for axis in "xyz"])


def _use_lane_context_forms(module, function, lane_context, workgroup_context=None):
    """Calls of lane-context functions in `function`'s own body take the
    lane's context `lane_context` (their `__of` forms, LANE_CONTEXT_FORMS);
    the workgroup id's take `workgroup_context` if given (any lane's context
    has its workgroup's id: one that does not change from lane to lane lets
    the lanes' loop read it once)."""
    t = module.types
    for call in list(_calls(function)):
        callee = _callee(call)
        if callee is None or callee.name not in LANE_CONTEXT_FORMS:
            continue
        ftype = callee.function_type
        of = _declared(module, callee.name + "__of",
                       t.function(ftype.return_type, [t.ptr] + list(ftype.param_types)))
        context = lane_context
        if workgroup_context is not None and callee.name.startswith("softhip_rt_workgroup_id_"):
            context = workgroup_context
        with module.create_builder(call) as builder:
            value = builder.call(of, [context] + [call.get_arg_operand(i) for i in range(call.num_arg_operands)])
        call.replace_all_uses_with(value)
        call.erase_from_parent()


def _post_rendezvous(module, call, rest, workgroup):
    """Replaces rendezvous `call` (its block split right after it, `rest` the
    part after) by its posting form with the workgroup as first argument; its
    result is read at the start of `rest`."""
    t = module.types
    if not call.type.is_void:
        name = f"softhip_rt_rendezvous_result_u{call.type.int_width}__of"
        with module.create_builder(rest.first_instruction) as builder:
            result = builder.call(_declared(module, name, t.function(call.type, [t.ptr])), [workgroup])
        call.replace_all_uses_with(result)
    callee = _callee(call)
    ftype = callee.function_type
    post = _declared(module, callee.name + "__post",
                     t.function(ftype.return_type, [t.ptr] + list(ftype.param_types)))
    with module.create_builder(call) as builder:
        # Operands read after the split (a wrapper read before may be stale).
        builder.call(post, [workgroup] + [call.get_arg_operand(i) for i in range(call.num_arg_operands)])
    call.erase_from_parent()


def _make_lanes_coroutines(module, kernel, guarded):
    """Makes `kernel` a switched-resume coroutine (LLVM's coroutine lowering
    splits it at `default<O2>`): it suspends right after each rendezvous call,
    which only posts the lane's part; once resumed it reads the result with
    softhip_rt_rendezvous_result_*. A phased runtime function
    (PHASED_RENDEZVOUS) becomes its phases, with a suspension after each
    posting one. What a lane keeps across a rendezvous lives in its frame,
    which the runtime allocates per lane: the lanes of a workgroup run one
    after another without stacks of their own."""
    t = module.types

    def declared(name, ret, params):
        return _declared(module, name, t.function(ret, params))

    coro_id = declared("llvm.coro.id", t.token, [t.i32, t.ptr, t.ptr, t.ptr])
    coro_size = declared("llvm.coro.size.i64", t.i64, [])
    coro_align = declared("llvm.coro.align.i64", t.i64, [])
    coro_begin = declared("llvm.coro.begin", t.ptr, [t.token, t.ptr])
    coro_suspend = declared("llvm.coro.suspend", t.i8, [t.token, t.i1])
    coro_free = declared("llvm.coro.free", t.ptr, [t.token, t.ptr])
    coro_end = declared("llvm.coro.end", t.i1, [t.ptr, t.i1, t.token])
    frame = declared("softhip_rt_coro_frame", t.ptr, [t.i64, t.i64])
    begin = declared("softhip_rt_coro_begin", t.void, [t.ptr, t.i32])
    none = t.token.null()  # `token none`
    null = t.ptr.null()

    rendezvous = [call for call in _calls(kernel)
                  if _callee(call) is not None and _callee(call).name in SIMPLE_RENDEZVOUS]
    phased = [call for call in _calls(kernel)
              if _callee(call) is not None and _callee(call).name in PHASED_RENDEZVOUS]
    returns = [block.terminator for block in kernel.basic_blocks
               if block.terminator is not None and block.terminator.opcode == llvm.Opcode.Ret]
    entry = kernel.entry_block
    first = entry.first_instruction
    while first.opcode == llvm.Opcode.Alloca:
        first = first.next_instruction
    with module.create_builder(first) as builder:
        token = builder.call(coro_id, [t.i32.constant(0), null, null, null])
        memory = builder.call(frame, [builder.call(coro_size, []), builder.call(coro_align, [])])
    # Without a frame (refused or out of memory, the failure recorded) the
    # lane returns before its coroutine begins.
    framed = entry.split_basic_block(memory.next_instruction, "softhip.coro.framed")
    no_frame = kernel.append_basic_block("softhip.coro.no_frame")
    entry.terminator.erase_from_parent()
    with module.create_builder(entry) as builder:
        builder.cond_br(builder.icmp(llvm.IntPredicate.EQ, memory, null), no_frame, framed)
    with module.create_builder(no_frame) as builder:
        builder.ret_void()
    with module.create_builder(framed.first_instruction) as builder:
        handle = builder.call(coro_begin, [token, memory])
        builder.call(begin, [handle, t.i32.constant(1 if guarded else 0)])
        # Read once, kept in the frame: the lane's context and its workgroup
        # (their thread-locals would be looked up again after every resumption).
        lane_context = builder.call(declared("softhip_rt_lane_context", t.ptr, []), [])
        workgroup = builder.call(declared("softhip_rt_workgroup_state", t.ptr, []), [])
    _use_lane_context_forms(module, kernel, lane_context)
    suspended = kernel.append_basic_block("softhip.coro.suspended")
    cleanup = kernel.append_basic_block("softhip.coro.cleanup")
    with module.create_builder(suspended) as builder:
        builder.call(coro_end, [handle, t.i1.constant(0), none])
        builder.ret_void()
    with module.create_builder(cleanup) as builder:
        builder.call(coro_free, [token, handle])
        builder.br(suspended)
    for ret in returns:
        with module.create_builder(ret) as builder:
            builder.br(cleanup)
        ret.erase_from_parent()

    def suspend_after(call):
        """Splits the block after `call`; returns the block the lane resumes in."""
        block = call.block
        resumed = block.split_basic_block(call.next_instruction, "softhip.coro.resumed")
        block.terminator.erase_from_parent()
        with module.create_builder(block) as builder:
            state = builder.call(coro_suspend, [none, t.i1.constant(0)])
            switch = builder.switch_(state, suspended, 2)
            switch.add_case(t.i8.constant(0), resumed)
            switch.add_case(t.i8.constant(1), cleanup)
        return resumed

    for call in rendezvous:
        _post_rendezvous(module, call, suspend_after(call), workgroup)
    for call in phased:
        callee = _callee(call)
        *posting, last = PHASED_RENDEZVOUS[callee.name]
        ftype = callee.function_type
        args = [call.get_arg_operand(i) for i in range(call.num_arg_operands)]
        for phase in posting:
            with module.create_builder(call) as builder:
                posted = builder.call(declared(phase, ftype.return_type, list(ftype.param_types)), args)
            suspend_after(posted)
        if last is not None:
            with module.create_builder(call) as builder:
                result = builder.call(declared(last, ftype.return_type, list(ftype.param_types)), args)
            call.replace_all_uses_with(result)
        call.erase_from_parent()
    kernel.attributes.add("presplitcoroutine")


# SOFTHIP_REGION_LOOPS=0: synchronising kernels run as LLVM coroutines instead
# of region loops (to compare the two).
REGION_LOOPS_ENV = "SOFTHIP_REGION_LOOPS"


def _region_loops_refused(kernel, guarded):
    """Why `kernel` (a coroutine candidate) cannot become region loops, or None."""
    if os.environ.get(REGION_LOOPS_ENV, "1") == "0":
        return f"{REGION_LOOPS_ENV}=0"
    if guarded:
        return "it can trap (a trap ends only its own lane's coroutine)"
    entry = kernel.entry_block
    for block in kernel.basic_blocks:
        for inst in block.instructions:
            if inst.opcode != llvm.Opcode.Alloca:
                continue
            if block != entry or not inst.get_operand(0).is_constant_int:
                return "it allocates private memory of a size known only when it runs"
            if inst.alignment > 64:
                return f"private memory aligned to {inst.alignment} bytes"
    return None


def _split_at_rendezvous(module, kernel, workgroup, declared):
    """Rewrites every rendezvous of `kernel`'s body into its posting form at
    the end of its block (_post_rendezvous), the rest of the block split off.
    Returns the rests, in order: the entries of the regions after the
    rendezvous."""
    continuations = []
    calls = [call for call in _calls(kernel) if _callee(call) is not None
             and (_callee(call).name in SIMPLE_RENDEZVOUS or _callee(call).name in PHASED_RENDEZVOUS)]

    def args_of(call):
        # Read again after each split: a wrapper of an operand read before a
        # split may be stale once the block's instructions moved.
        return [call.get_arg_operand(i) for i in range(call.num_arg_operands)]

    for call in calls:
        callee = _callee(call)
        ftype = callee.function_type
        if callee.name in SIMPLE_RENDEZVOUS:
            rest = call.block.split_basic_block(call.next_instruction, "softhip.region")
            continuations.append(rest)
            _post_rendezvous(module, call, rest, workgroup)
            continue
        *posting, last = PHASED_RENDEZVOUS[callee.name]
        for phase in posting:
            with module.create_builder(call) as builder:
                posted = builder.call(declared(phase, ftype.return_type, list(ftype.param_types)), args_of(call))
            continuations.append(posted.block.split_basic_block(posted.next_instruction, "softhip.region"))
        if last is not None:
            with module.create_builder(call) as builder:
                result = builder.call(declared(last, ftype.return_type, list(ftype.param_types)), args_of(call))
            call.replace_all_uses_with(result)
        call.erase_from_parent()
    return continuations


def _regions(entries):
    """Each region's blocks: those reachable from its entry without entering
    another entry (the code a lane runs between two rendezvous), entry first."""
    entry_set = set(entries)
    regions = []
    for start in entries:
        order, seen = [start], {start}
        for block in order:
            for successor in block.successors:
                if successor not in entry_set and successor not in seen:
                    seen.add(successor)
                    order.append(successor)
        regions.append(order)
    return regions


# The name of a buffer resource record's alloca (_Rewriter.rewrite_make_rsrc).
RESOURCE_RECORD = "softhip.resource"


def _workgroup_resources(kernel):
    """The kernel's buffer resource records that every lane fills alike: each
    field stored once, in the entry block, with a constant, a kernel
    parameter or an address space cast of one, and otherwise only read
    (loads, the lane runtime's buffer functions). Region loops fill these
    once per workgroup instead of in every lane's storage. {record's alloca:
    [(field, value, store)]}"""
    params = {kernel.get_param(i) for i in range(len(kernel.function_type.param_types))}
    entry = kernel.entry_block

    def uniform(value):
        if value.is_constant or value in params:
            return True
        return (value.is_instruction and value.opcode == llvm.Opcode.AddrSpaceCast
                and value.get_operand(0) in params)

    def fields_of(record):
        fields, pending, seen = [], [record], set()
        while pending:
            pointer = pending.pop()
            if pointer in seen:
                continue
            seen.add(pointer)
            for user in pointer.users:
                op = user.opcode
                if op in (llvm.Opcode.AddrSpaceCast, llvm.Opcode.BitCast):
                    pending.append(user)
                elif op == llvm.Opcode.Load:
                    continue
                elif op == llvm.Opcode.GetElementPtr:
                    if user.get_operand(0) != pointer or user.num_operands != 3 or not all(
                            user.get_operand(i).is_constant_int for i in (1, 2)) or \
                            user.get_operand(1).const_zext_value != 0:
                        return None
                    for access in user.users:
                        if access.opcode == llvm.Opcode.Load:
                            continue
                        if (access.opcode == llvm.Opcode.Store and access.get_operand(1) == user
                                and access.block == entry and uniform(access.get_operand(0))):
                            fields.append((user.get_operand(2).const_zext_value, access.get_operand(0), access))
                            continue
                        return None
                elif op == llvm.Opcode.Call:
                    # The buffer access bodies (_Rewriter.buffer_access,
                    # buffer_atomic) and the runtime's partial accesses only
                    # read the record.
                    callee = _callee(user)
                    if callee is None or not callee.name.startswith(("softhip_rt_buffer_", "softhip.amdgcn.raw.")):
                        return None
                else:
                    return None
        written = [field for field, _, _ in fields]
        return fields if len(set(written)) == len(written) else None

    found = {}
    for inst in entry.instructions:
        if inst.opcode == llvm.Opcode.Alloca and inst.name.startswith(RESOURCE_RECORD):
            fields = fields_of(inst)
            if fields is not None:
                found[inst] = fields
    return found


# What a region may compute again instead of keeping it in lane storage:
# integer and address arithmetic, comparisons, selects, and the lane-context
# reads (the lane's ids and position in its wave).
_RECOMPUTABLE = ARITHMETIC | {llvm.Opcode.GetElementPtr, llvm.Opcode.AddrSpaceCast, llvm.Opcode.BitCast,
                              llvm.Opcode.ICmp, llvm.Opcode.Select, llvm.Opcode.PtrToInt, llvm.Opcode.IntToPtr}
_RECOMPUTABLE_CALLS = re.compile(r"^softhip_rt_(workitem_id|workgroup_id)_[xyz]__of$|^softhip_rt_mbcnt_(lo|hi)__of$")


def _demote_values_live_across_regions(module, kernel, entries, regions, keep):
    """A value some region can reach a use of without passing its definition
    (it comes from an earlier region) lives in memory: a private slot (an
    alloca, later the lane's storage), stored after its definition and loaded
    before each use; or, when it is computed from values every region has
    (constants, parameters, `keep`, private memory's addresses) by
    _RECOMPUTABLE operations, it is computed again before each use. Values
    in `keep` are available everywhere."""
    use_blocks = {}
    for block in kernel.basic_blocks:
        for inst in block.instructions:
            if inst.type.is_void or inst in keep or inst.opcode == llvm.Opcode.Alloca:
                continue
            blocks = set()
            for user in inst.users:
                if user.opcode == llvm.Opcode.PHI:
                    blocks.update(user.get_incoming_block(i) for i in range(user.num_incoming)
                                  if user.get_incoming_value(i) == inst)
                else:
                    blocks.add(user.block)
            if blocks:
                use_blocks[inst] = blocks
    region_sets = [set(region) for region in regions]
    successors = {block: list(block.successors) for region in regions for block in region}

    def reachable(index, without):
        start = entries[index]
        found = set()
        if start != without:
            order = [start]
            found.add(start)
            for block in order:
                for successor in successors[block]:
                    if successor in region_sets[index] and successor != without and successor not in found:
                        found.add(successor)
                        order.append(successor)
        return found

    # Blocks some region reaches without passing `block`, per definition block.
    live_in = {}

    def reached_without(block):
        if block not in live_in:
            live_in[block] = set().union(*(reachable(i, block) for i in range(len(entries))))
        return live_in[block]

    crossing = [value for value, blocks in use_blocks.items() if blocks & reached_without(value.block)]
    entry = kernel.entry_block

    def root(value):
        return (value.is_constant or value.is_argument or value in keep
                or (value.is_instruction and value.opcode == llvm.Opcode.Alloca and value.block == entry))

    def recomputable(value, depth=8):
        if root(value):
            return True
        if not value.is_instruction or depth == 0:
            return False
        if value.opcode == llvm.Opcode.Call:
            callee = _callee(value)
            if callee is None or not _RECOMPUTABLE_CALLS.match(callee.name):
                return False
        elif value.opcode not in _RECOMPUTABLE:
            return False
        return all(recomputable(value.get_operand(i), depth - 1) for i in range(value.num_operands))

    def rebuilt(value, before):
        if root(value):
            return value
        operands = [rebuilt(value.get_operand(i), before) for i in range(value.num_operands)]
        clone = value.instruction_clone()
        with module.create_builder(before) as builder:
            builder.insert_into_builder_with_name(clone, "")
        for i, operand in enumerate(operands):
            clone.set_operand(i, operand)
        return clone

    for value in crossing:
        uses = [(user, i) for user in list(value.users) for i in range(user.num_operands)
                if user.get_operand(i) == value]
        if recomputable(value):
            # Computed again where used (from ids, parameters, constants and
            # private memory's addresses): no lane storage, and what does not
            # change from lane to lane leaves the lanes' loop.
            _replace_operands(uses, rebuilt)
            continue
        with module.create_builder(entry.first_instruction) as builder:
            slot = builder.alloca(value.type)
        after = value.block.first_non_phi if value.opcode == llvm.Opcode.PHI else value.next_instruction
        with module.create_builder(after) as builder:
            builder.store(value, slot)

        def loaded(value, before, slot=slot):
            with module.create_builder(before) as builder:
                return builder.load(value.type, slot)

        _replace_operands(uses, loaded)


def _replace_operands(uses, make):
    """Sets each operand `(user, index)` of `uses` to `make(operand, before)`,
    made before the user, or for a phi's entry at the end of its incoming
    block; once per user, block and operand (a phi's entries from one block
    must agree)."""
    made = {}
    for user, i in uses:
        operand = user.get_operand(i)
        block, before = None, user
        if user.opcode == llvm.Opcode.PHI:
            block = user.get_incoming_block(i)
            before = block.terminator
        key = (user, block, operand)
        if key not in made:
            made[key] = make(operand, before)
        user.set_operand(i, made[key])


def _make_region_loops(module, kernel, params, data_layout):
    """`softhip_workgroup__K(ctx)` running `kernel`'s lanes as loops between
    rendezvous (SOFTHIP_KERNEL_WORKGROUP_LOOP): the kernel is split at every
    rendezvous into regions, the code between two rendezvous (POCL's parallel
    regions); the workgroup function runs, region after region as the lane
    runtime's softhip_rt_next_region chooses, a loop over the lanes that wait
    to run that region, each lane's code compiled into the loop. What a lane
    keeps across a rendezvous (its private memory, values used in a later
    region) lives in lane storage, one array per slot (lane L's element at L),
    lent by the runtime. The rules and the order of the lanes are those of
    coroutine lanes."""
    t = module.types

    def declared(name, ret, args):
        return _declared(module, name, t.function(ret, args))

    entry = kernel.entry_block
    first = entry.first_instruction
    while first.opcode == llvm.Opcode.Alloca:
        first = first.next_instruction
    with module.create_builder(first) as builder:
        workgroup = builder.call(declared("softhip_rt_workgroup_state", t.ptr, []), [])
        lane_context = builder.call(declared("softhip_rt_lane_context", t.ptr, []), [])
        # The same context in the kernel; lane 0's in the workgroup function.
        workgroup_context = builder.call(declared("softhip_rt_lane_context", t.ptr, []), [])
    _use_lane_context_forms(module, kernel, lane_context, workgroup_context)
    entries = [entry] + _split_at_rendezvous(module, kernel, workgroup, declared)
    regions = _regions(entries)
    _demote_values_live_across_regions(module, kernel, entries, regions,
                                       {workgroup, lane_context, workgroup_context})
    shared = _workgroup_resources(kernel)

    # Lane storage: one array per private slot, lane L's element L slots apart.
    slots = []
    per_lane = 0
    for inst in entry.instructions:
        if inst.opcode != llvm.Opcode.Alloca or inst in shared:
            continue
        align = max(inst.alignment, data_layout.abi_alignment_of_type(inst.allocated_type), 1)
        size = data_layout.abi_size_of_type(inst.allocated_type) * inst.get_operand(0).const_zext_value
        size = (size + align - 1) // align * align
        per_lane = (per_lane + align - 1) // align * align
        slots.append((inst, per_lane, size))
        per_lane += size

    # The workgroup function: for each region, a loop over the lanes waiting
    # to run it, with a copy of the region's blocks as its body (each region
    # compiled on its own).
    w = _workgroup_function(module, kernel)
    first_context = w.get_param(0)
    start = w.append_basic_block("entry")
    refused = w.append_basic_block("no_storage")
    setup = w.append_basic_block("setup")
    dispatch = w.append_basic_block("dispatch")
    finish = w.append_basic_block("finish")
    with module.create_builder(start) as builder:
        wg = builder.call(declared("softhip_rt_workgroup_begin", t.ptr, [t.ptr, t.i64]),
                          [first_context, t.i64.constant(per_lane)])
        builder.cond_br(builder.icmp(llvm.IntPredicate.EQ, wg, t.ptr.null()), refused, setup)
    with module.create_builder(refused) as builder:
        builder.ret(t.i32.constant(1))
    with module.create_builder(setup) as builder:
        storage = builder.call(declared("softhip_rt_lane_storage", t.ptr, [t.ptr]), [wg])
        lanes = builder.call(declared("softhip_rt_workgroup_lanes", t.i32, [t.ptr]), [wg])
        lanes64 = builder.zext(lanes, t.i64)
        args = _load_parameters(module, builder, first_context, params)
        bases = [builder.gep(t.i8, storage, [builder.mul(lanes64, t.i64.constant(offset))])
                 for _, offset, _ in slots]
        # The lanes' shared buffer resources, filled once.
        parameter = {kernel.get_param(i): arg for i, arg in enumerate(args)}
        records = {}
        for record, fields in shared.items():
            with module.create_builder(start.first_instruction) as at_start:
                whole = at_start.alloca(record.allocated_type)
            records[record] = builder.addr_space_cast(whole, record.type)
            for field, value, _ in fields:
                if value.is_instruction:  # a cast of a parameter
                    value = builder.addr_space_cast(parameter[value.get_operand(0)], value.type)
                elif not value.is_constant:
                    value = parameter[value]
                builder.store(value, builder.struct_gep(record.allocated_type, whole, field))
        builder.br(dispatch)
    with module.create_builder(dispatch) as builder:
        following = builder.call(declared("softhip_rt_next_region", t.i32, [t.ptr]), [wg])
        switch = builder.switch_(following, finish, len(regions))
    with module.create_builder(finish) as builder:
        builder.ret(builder.call(declared("softhip_rt_workgroup_end", t.i32, [t.ptr]), [wg]))

    region_lane = declared("softhip_rt_region_lane", t.i1, [t.ptr, t.i32, t.i32])
    region_exit = declared("softhip_rt_region_exit", t.void, [t.ptr, t.i32])
    lane_done = declared("softhip_rt_lane_done", t.void, [t.ptr])
    lane_at = declared("softhip_rt_lane_at", t.ptr, [t.ptr, t.i32])
    entry_index = {block: index for index, block in enumerate(entries)}
    for index, region in enumerate(regions):
        head = w.append_basic_block(f"region{index}")
        check = w.append_basic_block(f"region{index}.lane")
        body = w.append_basic_block(f"region{index}.body")
        following_lane = w.append_basic_block(f"region{index}.next")
        switch.add_case(t.i32.constant(index), head)
        with module.create_builder(head) as builder:
            lane = builder.phi(t.i32)
            builder.cond_br(builder.icmp(llvm.IntPredicate.ULT, lane, lanes), check, dispatch)
        with module.create_builder(check) as builder:
            builder.cond_br(builder.call(region_lane, [wg, lane, t.i32.constant(index)]), body, following_lane)
        with module.create_builder(following_lane) as builder:
            next_lane = builder.add(lane, t.i32.constant(1))
            builder.br(head)
        lane.add_incoming(t.i32.constant(0), dispatch)
        lane.add_incoming(next_lane, following_lane)
        values = dict(parameter)
        values[workgroup] = wg
        values[workgroup_context] = first_context
        values.update(records)
        for fields in shared.values():
            for _, _, store in fields:
                values[store] = store  # done once, before the lanes' loops
        with module.create_builder(body) as builder:
            values[lane_context] = builder.call(lane_at, [first_context, lane])
            offset = builder.zext(lane, t.i64)
            for (slot, _, size), base in zip(slots, bases):
                pointer = builder.gep(t.i8, base, [builder.mul(offset, t.i64.constant(size))])
                values[slot] = builder.addr_space_cast(pointer, slot.type)
        blocks = {block: w.append_basic_block(f"region{index}.{block.name}") for block in region}
        exits = {}

        def target(block):
            # Entering a region's entry (this region's own, around a loop,
            # included) is leaving this region at a rendezvous.
            if block in blocks and block not in entry_index:
                return blocks[block]
            if block not in exits:
                exits[block] = w.append_basic_block(f"region{index}.to{entry_index[block]}")
                with module.create_builder(exits[block]) as builder:
                    builder.call(region_exit, [wg, t.i32.constant(entry_index[block])])
                    builder.br(following_lane)
            return exits[block]

        with module.create_builder(body) as builder:
            builder.br(blocks[region[0]])
        clones, phis = [], []
        for block in region:
            with module.create_builder(blocks[block]) as builder:
                for inst in block.instructions:
                    if inst in values:
                        continue
                    if inst.opcode == llvm.Opcode.PHI:
                        values[inst] = builder.phi(inst.type)
                        phis.append(inst)
                    elif inst.opcode == llvm.Opcode.Ret:
                        builder.call(lane_done, [wg])
                        builder.br(following_lane)
                    elif (inst.opcode == llvm.Opcode.Call and _callee(inst) is not None
                          and _callee(inst).name.startswith("llvm.lifetime.")):
                        continue  # lane storage is no alloca
                    else:
                        clone = inst.instruction_clone()
                        builder.insert_into_builder_with_name(clone, "")
                        values[inst] = clone
                        clones.append(clone)
        for clone in clones:
            for i in range(clone.num_operands):
                operand = clone.get_operand(i)
                if operand.value_is_basic_block:
                    clone.set_operand(i, target(operand.value_as_basic_block()).as_value())
                elif operand in values:
                    clone.set_operand(i, values[operand])
                elif operand.is_instruction and operand.block.function == kernel:
                    raise UnsupportedConstruct(
                        f"kernel {kernel.name}: internal error: region {index} uses a value of another region")
        for phi in phis:
            for i in range(phi.num_incoming):
                block = phi.get_incoming_block(i)
                if block in blocks:
                    value = phi.get_incoming_value(i)
                    values[phi].add_incoming(values.get(value, value), blocks[block])
    return w


def _define_coroutine_resume(module):
    """`softhip_coro_resume_handle(handle)`: llvm.coro.resume, which the lane
    runtime's resume functions call (C has no spelling of it)."""
    t = module.types
    resume = _declared(module, "llvm.coro.resume", t.function(t.void, [t.ptr]))
    function = module.add_function("softhip_coro_resume_handle", t.function(t.void, [t.ptr]))
    with module.create_builder(function.append_basic_block("entry")) as builder:
        builder.call(resume, [function.get_param(0)])
        builder.ret_void()


def _lane_body_with_context(module, kernel):
    """Moves `kernel`'s body into `K.lane(ctx, params...)`, whose lane-context
    reads in its own body take the lane's context from its first parameter
    (LANE_CONTEXT_FORMS) instead of a thread-local; `kernel` calls it with the
    thread-local's context. Returns `K.lane`."""
    t = module.types
    ftype = kernel.function_type
    body = module.add_function(kernel.name + ".lane",
                               t.function(t.void, [t.ptr] + list(ftype.param_types)))
    body.linkage = llvm.Linkage.Internal
    for block in list(kernel.basic_blocks):
        block.remove_from_parent()
        body.append_existing_basic_block(block)
    for i in range(len(ftype.param_types)):
        kernel.get_param(i).replace_all_uses_with(body.get_param(i + 1))
    _use_lane_context_forms(module, body, body.get_param(0))
    with module.create_builder(kernel.append_basic_block("entry")) as builder:
        lane = builder.call(_declared(module, "softhip_rt_lane_context", t.function(t.ptr, [])), [])
        builder.call(body, [lane] + [kernel.get_param(i) for i in range(len(ftype.param_types))])
        builder.ret_void()
    return body


def _workgroup_function(module, kernel):
    """`softhip_workgroup__K(ctx)`, empty: the entry of K's workgroup loop
    (SOFTHIP_KERNEL_WORKGROUP_LOOP), with lane 0's context."""
    t = module.types
    function = module.add_function("softhip_workgroup__" + kernel.name, t.function(t.i32, [t.ptr]))
    function.linkage = llvm.Linkage.Internal
    return function


def _load_parameters(module, builder, first_context, params):
    """K's parameters, read once per workgroup (every lane has the same)."""
    t = module.types
    arg_of = _declared(module, "softhip_rt_arg__of", t.function(t.ptr, [t.ptr, t.i32]))
    return [builder.load(ptype, builder.call(arg_of, [first_context, t.i32.constant(i)]))
            for i, ptype in enumerate(params)]


def _add_workgroup_loop(module, kernel, params):
    """`softhip_workgroup__K(ctx)` (SOFTHIP_KERNEL_WORKGROUP_LOOP without SYNC):
    loads K's parameters once and runs its lanes one after another, each with
    its context from the runtime's array; K's body inlines into the loop."""
    t = module.types
    body = _lane_body_with_context(module, kernel)
    declared = lambda name, ret, args: _declared(module, name, t.function(ret, args))  # noqa: E731
    lane_count = declared("softhip_rt_lane_count", t.i32, [t.ptr])
    lane_at = declared("softhip_rt_lane_at", t.ptr, [t.ptr, t.i32])
    enter = declared("softhip_rt_enter", t.void, [t.ptr])
    workgroup = _workgroup_function(module, kernel)
    first = workgroup.get_param(0)
    entry = workgroup.append_basic_block("entry")
    loop = workgroup.append_basic_block("lanes")
    done = workgroup.append_basic_block("done")
    with module.create_builder(entry) as builder:
        args = _load_parameters(module, builder, first, params)
        count = builder.call(lane_count, [first])
        builder.br(loop)
    with module.create_builder(loop) as builder:
        lane = builder.phi(t.i32)
        context = builder.call(lane_at, [first, lane])
        builder.call(enter, [context])
        builder.call(body, [context] + args)
        following = builder.add(lane, t.i32.constant(1))
        builder.cond_br(builder.icmp(llvm.IntPredicate.UGE, following, count), done, loop)
    lane.add_incoming(t.i32.constant(0), entry)
    lane.add_incoming(following, loop)
    with module.create_builder(done) as builder:
        builder.ret(t.i32.constant(0))
    return workgroup


def _add_entry_and_descriptor(module, kernel, sync, wave_size, guarded=False, coroutine=False,
                              workgroup=None):
    """`softhip_entry__K(ctx)` loads K's parameters from the launch and calls
    it; `softhip_kernel__K` describes it to the software device. A kernel
    that can trap runs inside softhip_rt_guarded, which turns the trap into a
    failed launch."""
    t = module.types
    name = kernel.name
    ftype = kernel.function_type
    kernel.calling_conv = llvm.CallConv.C
    kernel.linkage = llvm.Linkage.Internal
    enter = module.get_function("softhip_rt_enter") or module.add_function(
        "softhip_rt_enter", t.function(t.void, [t.ptr]))
    arg = module.get_function("softhip_rt_arg") or module.add_function(
        "softhip_rt_arg", t.function(t.ptr, [t.i32]))
    entry = module.add_function("softhip_entry__" + name, t.function(t.i32, [t.ptr]))
    entry.linkage = llvm.Linkage.Internal
    body = entry
    if guarded:
        body = module.add_function("softhip_body__" + name, t.function(t.void, []))
        body.linkage = llvm.Linkage.Internal
        guard = module.get_function("softhip_rt_guarded") or module.add_function(
            "softhip_rt_guarded", t.function(t.i32, [t.ptr, t.ptr]))
        with module.create_builder(entry.append_basic_block("entry")) as builder:
            builder.ret(builder.call(guard, [entry.get_param(0), body]))
    params = []
    with module.create_builder(body.append_basic_block("entry")) as builder:
        if not guarded:
            builder.call(enter, [entry.get_param(0)])
        args = []
        for i, ptype in enumerate(ftype.param_types):
            if ptype.is_pointer:
                params.append((8, 8))
            elif ptype.kind == llvm.TypeKind.Integer and ptype.int_width == 32:
                params.append((4, 4))
            else:
                raise UnsupportedConstruct(
                    f"kernel {name}: parameter {i} of type {ptype} "
                    "(IREE passes binding pointers and i32 constants)")
            pointer = builder.call(arg, [t.i32.constant(i)])
            args.append(builder.load(ptype, pointer))
        builder.call(kernel, args)
        if guarded:
            builder.ret_void()
        else:
            builder.ret(t.i32.constant(0))
    param_type = t.struct([t.i32, t.i32])
    # One leading {0, 0} keeps the array non-empty, as the C macro does.
    pairs = [(0, 0)] + params
    param_array = module.add_global(param_type.array(len(pairs)), "softhip_params__" + name)
    param_array.initializer = param_type.array_const([
        module.context.const_struct([t.i32.constant(s), t.i32.constant(a)]) for s, a in pairs])
    param_array.linkage = llvm.Linkage.Internal
    param_array.is_global_constant = True
    first_param = param_type.array(len(pairs)).gep_const(
        param_array, [t.i32.constant(0), t.i32.constant(1)], 0)
    flags = (SOFTHIP_KERNEL_SYNC if sync else 0) | (SOFTHIP_KERNEL_COROUTINE if coroutine else 0)
    if not sync and not guarded and os.environ.get(WORKGROUP_LOOPS_ENV, "1") != "0":
        # Lanes that never wait for each other: one loop over them in the code
        # object (a trap needs its per-lane guard: such kernels keep the runtime's).
        entry = _add_workgroup_loop(module, kernel, ftype.param_types)
        flags |= SOFTHIP_KERNEL_WORKGROUP_LOOP
    elif workgroup is not None:
        # Region loops (_make_region_loops).
        entry = workgroup
        flags |= SOFTHIP_KERNEL_WORKGROUP_LOOP
    elif coroutine:
        # The lane runtime schedules the workgroup's coroutine lanes itself.
        run = _declared(module, "softhip_rt_run_workgroup", t.function(t.i32, [t.ptr, t.ptr]))
        workgroup = _workgroup_function(module, kernel)
        with module.create_builder(workgroup.append_basic_block("entry")) as builder:
            builder.ret(builder.call(run, [workgroup.get_param(0), entry]))
        entry = workgroup
        flags |= SOFTHIP_KERNEL_WORKGROUP_LOOP
    descriptor_type = t.struct([t.i32, t.i32, t.i32, t.i32, t.ptr, t.ptr, t.i32, t.i32, t.i64])
    descriptor = module.add_global(descriptor_type, "softhip_kernel__" + name)
    descriptor.initializer = module.context.const_struct([
        t.i32.constant(SOFTHIP_KERNEL_MAGIC),
        t.i32.constant(SOFTHIP_KERNEL_ABI_VERSION),
        t.i32.constant(SOFTHIP_PER_LANE),
        t.i32.constant(len(params)),
        first_param,
        entry,
        t.i32.constant(flags),
        t.i32.constant(wave_size),
        t.i64.constant(0),
    ])
    descriptor.is_global_constant = True
    descriptor.linkage = llvm.Linkage.External
    descriptor.visibility = llvm.Visibility.Default


def _target_machines(gpu_arch):
    amdgcn = llvm.TargetMachine.create(
        llvm.Target.from_triple(AMDGCN_TRIPLE), AMDGCN_TRIPLE, gpu_arch)
    x86 = llvm.TargetMachine.create(
        llvm.Target.from_triple(X86_TRIPLE), X86_TRIPLE, "x86-64-v2",
        reloc_mode=llvm.RelocMode.PIC)
    return amdgcn, x86


# The targets whose instruction semantics the lane runtime implements: gfx940-942
# (MI300: MFMA with FNUZ fp8, wave64), gfx90a (MI200, wave64), gfx1100-1102
# (RDNA3: WMMA, wave32). Another target (gfx950's OCP fp8 under the same
# intrinsic names, gfx12's WMMA layouts) is refused rather than guessed.
SUPPORTED_TARGETS = {"gfx940": 64, "gfx941": 64, "gfx942": 64, "gfx90a": 64,
                     "gfx1100": 32, "gfx1101": 32, "gfx1102": 32}
# IREE's product and architecture names for them (--iree-hip-target accepts both).
TARGET_ALIASES = {"mi300x": "gfx942", "mi300a": "gfx942", "mi308x": "gfx942", "cdna3": "gfx942",
                  "mi250x": "gfx90a", "mi250": "gfx90a", "mi210": "gfx90a", "cdna2": "gfx90a",
                  "rx7900xtx": "gfx1100", "rx7900xt": "gfx1100", "w7900": "gfx1100",
                  "w7800": "gfx1100", "rdna3": "gfx1100"}


def canonical_target(name: str) -> str:
    arch = TARGET_ALIASES.get(name.lower(), name.lower()).split(":")[0]
    if arch not in SUPPORTED_TARGETS:
        raise UnsupportedConstruct(
            f"AMDGPU target `{name}`: softhip-iree-compile runs "
            f"{', '.join(sorted(SUPPORTED_TARGETS))} (and their product names)")
    return arch


def wave_size_of(gpu_arch: str, features: str = "") -> int:
    """gfx9 runs wave64, gfx11 wave32 (gfx11 in wave64 has other WMMA layouts:
    refused)."""
    arch = canonical_target(gpu_arch)
    if "+wavefrontsize64" in features and SUPPORTED_TARGETS[arch] == 32:
        raise UnsupportedConstruct(f"{arch} with +wavefrontsize64 (WMMA's wave64 layouts)")
    return SUPPORTED_TARGETS[arch]


def retarget(ir_text: str, runtime_bitcode: bytes, gpu_arch: str = "gfx942",
             wave_size: int | None = None,
             dump_path: str | None = None) -> tuple[bytes, list[KernelInfo]]:
    """Returns an x86-64 relocatable object with one descriptor per kernel."""
    if wave_size is None:
        wave_size = wave_size_of(gpu_arch)
    gpu_arch = canonical_target(gpu_arch)
    amdgcn, x86 = _target_machines(gpu_arch)
    error = llvm21_parse_error(ir_text)
    if error:
        raise UnsupportedConstruct(f"LLVM IR that LLVM {BINDINGS_LLVM_MAJOR} cannot read: {error}")
    with llvm.create_context() as ctx:
        with ctx.parse_ir(ir_text) as module:
            module.target_triple = AMDGCN_TRIPLE
            module.data_layout = str(amdgcn.create_data_layout())
            _drop_assumes(module)
            # Masked loads/stores/gathers become branches around plain
            # accesses first: the fat pointer lowering takes no vectors of
            # buffer pointers.
            module.run_passes("function(scalarize-masked-mem-intrin)", amdgcn)
            module.run_passes("amdgpu-lower-buffer-fat-pointers", amdgcn)
            kernels = _kernels(module)
            if not kernels:
                raise UnsupportedConstruct("the module defines no amdgpu_kernel function")
            _internalize(module, kernels)
            module.run_passes("globaldce")
            kernels = _kernels(module)
            reach = _Reach(module, kernels)
            dims = _workgroup_dims(ir_text)
            _run_uniform_tails_on_one_lane(module, kernels, dims)
            _check_lds_lockstep(module, reach)
            _check_global_lockstep(module, reach, dims)
            rewriter = _Rewriter(module, kernels, reach)
            rewriter.data_layout = x86.create_data_layout()
            rewriter.rewrite()
            infos = []
            for kernel in kernels:
                sync = any(kernel.name in reach.kernels_reaching(f) for f in rewriter.sync_functions)
                reason = _fiber_reason(kernel, reach, rewriter.sync_functions) if sync else None
                infos.append(KernelInfo(kernel.name, len(kernel.function_type.param_types), sync, wave_size,
                                        sync and reason is None, reason))
            _make_lds_thread_local(module)
            for kernel, info in zip(kernels, infos):
                traps = any(kernel.name in reach.kernels_reaching(f) for f in rewriter.trap_functions)
                workgroup = None
                if info.coroutine:
                    if _region_loops_refused(kernel, traps) is None:
                        workgroup = _make_region_loops(module, kernel, kernel.function_type.param_types,
                                                       rewriter.data_layout)
                        info.region_loops = True
                    else:
                        _make_lanes_coroutines(module, kernel, traps)
                _add_entry_and_descriptor(module, kernel, info.sync, wave_size, traps, info.coroutine,
                                          workgroup)
            _define_coroutine_resume(module)
            module.target_triple = X86_TRIPLE
            module.data_layout = str(x86.create_data_layout())
            _strip_target_attributes(module)
            _move_allocas_to_generic_space(module)
            with ctx.parse_bitcode_from_bytes(runtime_bitcode) as runtime:
                runtime.target_triple = X86_TRIPLE
                module.link_module(runtime)
            _internalize_runtime(module)
            _hoist_thread_local_addresses(module)
            _define_bf16_truncation(module)
            module.verify_or_raise()
            if dump_path:
                module.print_to_file(dump_path)
            module.run_passes("default<O2>", x86)
            module.verify_or_raise()
            return module.emit_object(x86), infos


def _define_bf16_truncation(module):
    """`__truncsfbf2`, float to bfloat, in the code object itself, where the
    module converts to bfloat (an `fptrunc`, or bfloat arithmetic, which
    LLVM's x86-64 backend does in float and rounds through this libcall;
    IREE 3.13 emits both, 3.3.0 rounded with integer operations itself). The
    host's libgcc need not have it (GCC 12's has not). It rounds as gfx942
    does, which has no bf16 conversion instruction and so gets LLVM's AMDGPU
    expansion: to nearest even on the bits; a NaN stays a NaN with its sign,
    quieted (`(bits | 0x400000) >> 16`). Hidden: each code object has its
    own."""
    if "bfloat" not in str(module) or module.get_function("__truncsfbf2") is not None:
        return
    t = module.types
    bfloat = t.bf16
    function = module.add_function("__truncsfbf2", t.function(bfloat, [t.f32]))
    function.visibility = llvm.Visibility.Hidden
    with module.create_builder(function.append_basic_block("entry")) as builder:
        source = function.get_param(0)
        bits = builder.bitcast(source, t.i32)
        lsb = builder.and_(builder.lshr(bits, t.i32.constant(16)), t.i32.constant(1))
        rounded = builder.add(builder.add(bits, t.i32.constant(0x7FFF)), lsb)
        quiet = builder.or_(bits, t.i32.constant(0x400000))
        is_nan = builder.fcmp(llvm.RealPredicate.UNO, source, source)
        chosen = builder.select(is_nan, quiet, rounded)
        upper = builder.trunc(builder.lshr(chosen, t.i32.constant(16)), t.int_n(16))
        builder.ret(builder.bitcast(upper, bfloat))


def _move_allocas_to_generic_space(module):
    """AMDGPU allocates the stack in address space 5; x86-64 in 0."""
    t = module.types
    for function in module.functions:
        for block in function.basic_blocks:
            for inst in list(block.instructions):
                if inst.opcode != llvm.Opcode.Alloca or inst.type.pointer_address_space == 0:
                    continue
                with module.create_builder(inst) as builder:
                    # `alloca T, i64 N` keeps its element count.
                    generic = builder.alloca(inst.allocated_type, inst.get_operand(0))
                    generic.alignment = inst.alignment
                    cast = builder.addr_space_cast(generic, inst.type)
                inst.replace_all_uses_with(cast)
                inst.erase_from_parent()


def _strip_target_attributes(module):
    for function in module.functions:
        if not function.is_declaration:
            # Lanes' fiber stacks sit side by side above guard pages: a frame larger
            # than a page must touch each page on its way down.
            function.attributes.add_string("probe-stack", "inline-asm")
        for key in ("target-cpu", "target-features", "amdgpu-flat-work-group-size",
                    "amdgpu-waves-per-eu", "uniform-work-group-size"):
            function.attributes.remove_string(key) if key in function.attributes else None


def _hoist_thread_local_addresses(module):
    """Each function that is no coroutine takes the addresses of the
    thread-locals it uses (LDS, the lane runtime's workgroup) once, at its
    entry (llvm.threadlocal.address), instead of at every use: in a shared
    object every computation is a __tls_get_addr call (a tenth of the
    instructions of an LDS-heavy kernel's region loops). A function runs on
    one host thread from entry to return; a coroutine may be resumed on
    another, so coroutines keep their uses."""
    t = module.types
    tls = {value for value in module.globals if value.is_thread_local}

    def mentions(value, depth=6):
        if value in tls:
            return True
        return depth > 0 and value.is_constant_expr and any(
            mentions(value.get_operand(i), depth - 1) for i in range(value.num_operands))

    for function in module.functions:
        if function.is_declaration or "presplitcoroutine" in function.attributes:
            continue
        uses = [(inst, i) for block in function.basic_blocks for inst in block.instructions
                if not (inst.opcode == llvm.Opcode.Call and inst.called_value.is_function
                        and inst.called_value.name.startswith("llvm.threadlocal.address"))
                for i in range(inst.num_operands) if mentions(inst.get_operand(i))]
        if not uses:
            continue
        entry = function.entry_block
        addresses = {}

        def address(value):
            if value not in addresses:
                space = value.type.pointer_address_space
                intrinsic = _declared(module, f"llvm.threadlocal.address.p{space}",
                                      t.function(value.type, [value.type]))
                with module.create_builder(entry.first_instruction) as builder:
                    addresses[value] = builder.call(intrinsic, [value])
            return addresses[value]

        def materialized(value, before):
            if value in tls:
                return address(value)
            operands = [materialized(value.get_operand(i), before) if mentions(value.get_operand(i))
                        else value.get_operand(i) for i in range(value.num_operands)]
            with module.create_builder(before) as builder:
                if value.const_opcode == llvm.Opcode.GetElementPtr:
                    return builder.gep(value.gep_source_element_type, operands[0], operands[1:])
                if value.const_opcode == llvm.Opcode.AddrSpaceCast:
                    return builder.addr_space_cast(operands[0], value.type)
                if value.const_opcode == llvm.Opcode.PtrToInt:
                    return builder.ptr_to_int(operands[0], value.type)
            raise UnsupportedConstruct(f"internal error: a thread-local in a constant expression "
                                       f"({value.const_opcode}) in function {function.name}")

        _replace_operands(uses, materialized)


def _internalize_runtime(module):
    for function in module.functions:
        if not function.is_declaration:
            function.linkage = llvm.Linkage.Internal
    for value in module.globals:
        if not value.is_declaration and not value.name.startswith("softhip_kernel__"):
            value.linkage = llvm.Linkage.Internal
