"""numba IR -> one LLVM module of C-ABI functions -> an object file for a target.

The route (measured in the feasibility study the exporter follows): compile
each shim with numba (IR at ``NUMBA_OPT=0``, so it is not tuned to the
host), wrap it in a plain C function through numba's calling convention,
link everything into one module, make every symbol but the C functions
internal, give NRT's reference counting a no-op body (``carray`` arrays own
no memory), retarget the module (triple, data layout), run LLVM's O3 (or Os)
pipeline for the target CPU and emit an object file. No fastmath and no FMA
contraction anywhere: that is what keeps the results bit-identical to the JIT.
"""

from __future__ import annotations

import re
from typing import Any

import llvmlite.binding as llvm
from llvmlite import ir

#: numba's runtime functions a shim may reference; with no allocation (the
#: symbol check proves it) every array's meminfo is NULL and these do nothing.
_NOOP_RUNTIME = ("NRT_incref", "NRT_decref")


def _initialise() -> None:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()


def shim_ir(functions: dict[str, tuple], prefix: str) -> tuple[list[str], list[str]]:
    """Compile the shims; return their IR modules and the C names they export."""
    from numba import njit

    from .shims import SHIM_OPTIONS

    modules, names = [], []
    for short, (pyfunc, sig) in functions.items():
        dispatcher = njit(sig, **SHIM_OPTIONS)(pyfunc)
        cres = dispatcher.overloads[sig.args]
        ctx = cres.target_context
        modules.append(cres.library.get_llvm_str())
        cname = f"{prefix}_{short}"
        names.append(cname)
        modules.append(_c_wrapper(ctx, cres, cname))
    if any(f"@{_RESHAPE}(" in text for text in modules):
        from .shims import nocopy_reshape, nocopy_reshape_signature

        # numba's reshape calls a C helper of its own library (helperlib), which
        # a device does not have: the export brings one (internal after linking).
        sig = nocopy_reshape_signature()
        cres = njit(sig, **SHIM_OPTIONS)(nocopy_reshape).overloads[sig.args]
        modules += [cres.library.get_llvm_str(), _c_wrapper(cres.target_context, cres, _RESHAPE)]
    return modules, names


#: numba's helper for ``ndarray.reshape`` (``numba_attempt_nocopy_reshape``).
_RESHAPE = "numba_attempt_nocopy_reshape"


def _c_wrapper(ctx: Any, cres: Any, cname: str) -> str:
    """A C-ABI function ``cname`` calling numba's function (error status: NaN or 2)."""
    sig = cres.signature
    module = ir.Module(name=cname)
    inner_ty = ctx.call_conv.get_function_type(sig.return_type, sig.args)
    inner = ir.Function(module, inner_ty, cres.fndesc.mangled_name)
    ret = ctx.get_value_type(sig.return_type)
    fn = ir.Function(module, ir.FunctionType(ret, [ctx.get_value_type(a) for a in sig.args]),
                     cname)
    builder = ir.IRBuilder(fn.append_basic_block())
    status, value = ctx.call_conv.call_function(builder, inner, sig.return_type, sig.args,
                                                list(fn.args))
    failed = ir.Constant(ret, float("nan") if isinstance(ret, ir.DoubleType) else 2)
    builder.ret(builder.select(status.is_error, failed, value))
    return str(module)


def _runtime_ir() -> str:
    """No-op bodies for numba's reference counting (internal after linking)."""
    module = ir.Module(name="edgereg_runtime")
    ptr = ir.IntType(8).as_pointer()
    for name in _NOOP_RUNTIME:
        fn = ir.Function(module, ir.FunctionType(ir.VoidType(), [ptr]), name)
        ir.IRBuilder(fn.append_basic_block()).ret_void()
    return str(module)


def target_machine(triple: str, cpu: str, features: str, size: bool, abi: str = "") -> Any:
    """``abi``: the calling convention's name where a target has several (RISC-V:
    ``ilp32`` soft float, ``ilp32f`` floats in FPU registers; it is written in
    the object's ELF flags and must match the C compiler's ``-mabi``)."""
    _initialise()
    target = llvm.Target.from_triple(triple)
    return target.create_target_machine(cpu=cpu, features=features, opt=2 if size else 3,
                                        reloc="pic", codemodel="default", abiname=abi)


#: RISC-V calling conventions: name -> the float type passed in FPU registers.
_RISCV_ABIS = {"ilp32": None, "ilp32e": None, "ilp32f": "float", "ilp32d": "double",
               "lp64": None, "lp64e": None, "lp64f": "float", "lp64d": "double"}
_SOFT_ADD = {"float": "__addsf3", "double": "__adddf3"}


def abi_problem(triple: str, cpu: str, features: str, abi: str) -> str | None:
    """Why ``abi`` cannot be honoured for this target, or None.

    LLVM answers an ABI the CPU cannot honour (``ilp32f`` without the F
    extension) or an unknown name with a warning on stderr and the default
    ABI's code, yet writes the asked ABI in the object's ELF flags (measured
    with ``sifive-e31`` and ``ilp32f``: flags 0x3, single-float): the link
    would succeed and pass floats in the wrong registers. A probe function
    adding two floats shows which: with the FPU it needs no soft-float helper.
    """
    if not abi:
        return None
    if not triple.startswith("riscv"):
        return f"abi={abi!r} is only used for RISC-V targets (got {triple!r})"
    if abi not in _RISCV_ABIS or abi.startswith("lp64") != triple.startswith("riscv64"):
        names = sorted(a for a in _RISCV_ABIS if a.startswith("lp64") ==
                       triple.startswith("riscv64"))
        return f"abi={abi!r} is not a RISC-V ABI of {triple!r}; one of {names}"
    kind = _RISCV_ABIS[abi]
    if kind is None:
        return None
    tm = target_machine(triple, cpu, features, False, abi)
    probe = llvm.parse_assembly(f"define {kind} @probe({kind} %a, {kind} %b) {{\n"
                                f"  %c = fadd {kind} %a, %b\n  ret {kind} %c\n}}")
    probe.triple = triple
    if _SOFT_ADD[kind].encode() in tm.emit_object(probe):
        hint = " (rv32imafc: sifive-e76)" if kind == "float" else ""
        return (f"abi={abi!r} passes {kind}s in FPU registers, but cpu {cpu or 'generic'!r} "
                f"has no {kind} FPU (the {'F' if kind == 'float' else 'D'} extension): "
                f"choose a cpu with it{hint} or the soft-float ABI")
    return None


#: numba's exception descriptor: {pickled exception, its length, its SHA-1, ...}.
_PICKLEBUF = re.compile(r"^(@\.const\.picklebuf\.\S+ = internal constant \{[^}]*\}) \{.*\}$",
                        re.MULTILINE)


def _drop_exception_payloads(text: str) -> str:
    """Zero numba's exception descriptors. A kernel's raise path (e.g. the checks of
    ``ndarray.view``, never taken on the shims' fixed-stride arrays) stores a
    pointer to one; only numba's Python wrapper reads it, to rebuild the Python
    exception. The C wrapper returns the error status alone, so the pointers to
    the pickled exceptions (absolute addresses: relocations in ``.data.rel.ro``
    on most targets, and file paths of numba's sources in the object) are dead."""
    return _PICKLEBUF.sub(r"\1 zeroinitializer", text)


def link(modules: list[str], exported: list[str]) -> Any:
    """One module of every shim and its callees; only ``exported`` stays external."""
    _initialise()
    main = llvm.parse_assembly(_runtime_ir())
    for text in modules:
        main.link_in(llvm.parse_assembly(_drop_exception_payloads(text)))
    keep = set(exported)
    for fn in main.functions:
        if not fn.is_declaration and fn.name not in keep:
            fn.linkage = "internal"
    for gv in main.global_variables:
        if not gv.is_declaration:
            gv.linkage = "internal"
    return main


def build(modules: list[str], exported: list[str], triple: str, cpu: str = "",
          features: str = "", size: bool = False, abi: str = "") -> tuple[bytes, str]:
    """The object file for ``triple`` and the optimised IR (for the checks)."""
    module = link(modules, exported)
    tm = target_machine(triple, cpu, features, size, abi)
    module.triple = triple
    module.data_layout = str(tm.target_data)
    # Host attributes numba put on its functions would override the target's.
    text = _strip_host_attributes(str(module))
    module = llvm.parse_assembly(text)
    module.triple = triple
    module.data_layout = str(tm.target_data)
    module.verify()
    pto = llvm.create_pipeline_tuning_options(speed_level=2 if size else 3)
    if size:
        pto.loop_unrolling = False
        pto.loop_vectorization = False
        pto.slp_vectorization = False
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(module, pb)
    return tm.emit_object(module), str(module)


def _strip_host_attributes(text: str) -> str:
    text = re.sub(r'"target-cpu"="[^"]*"', "", text)
    return re.sub(r'"target-features"="[^"]*"', "", text)


def normalise_triple(triple: str) -> str:
    """``arch-none-eabi`` spelled with its vendor: LLVM reads the short form as
    vendor "none", OS "eabi" and silently uses a non-EABI ABI (measured: GNU
    soft-float helper names on thumbv6m, the soft-float ABI on thumbv7em)."""
    parts = triple.split("-")
    if len(parts) == 3 and parts[1] == "none":
        return "-".join([parts[0], "unknown", *parts[1:]])
    return triple


def host_cpu() -> tuple[str, str]:
    """The host's CPU name and features (what the JIT compiles for)."""
    _initialise()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def host_triple() -> str:
    _initialise()
    return llvm.get_process_triple()


def leftovers(optimised_ir: str) -> list[str]:
    """Host addresses or numba globals that must not survive optimisation."""
    bad = []
    for marker in ("numba.dynamic.globals", "NumbaEnv", "inttoptr (i64"):
        if marker in optimised_ir:
            bad.append(marker)
    return bad
