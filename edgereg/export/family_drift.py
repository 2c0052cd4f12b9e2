"""DriftAlarm's export: the wrapped model's blocks and the alarm's in one struct.

``drift_family(alarm)`` takes the wrapped model's own family (DFOP / RLS with
a fixed forgetting factor, or the ``forgetting="auto"`` bank; float64, or
float32 of the default arithmetic) and appends the alarm's five blocks, the
arrays the class hands its test kernel (``compare_drift_run`` for
``test="compare"``, ``drift_run`` for ``test="eprocess"``):

    drift_E      float64  the test's block (``drift``: instances, the incumbent RLS, ...)
    drift_N      int64    the ring of the latest alarms (``drifts``), then ``drift_counts``
    drift_work   float64  2 d of scratch (``drift_scratch``)
    drift_hyper  float64  the test's hyper-parameters
    drift_codes  int64    the test's integer options

The calls keep the wrapped model's C shapes. Each shim calls the model's
shim (inlined) and then the test on the rows the class gives it: learn_one
its one row (x, y, the prediction made before y), learn_many the rows the
model handled (all, or those before the first refused one), exactly as
``DriftAlarm.learn_one`` / ``_learn_block`` do. A row the model refuses has a
NaN prediction, which the test does not count. The alarm reads the
predictions: learn_many takes no per-step forgetting (``n_mu`` must be 0), as
``DriftAlarm.learn_many`` takes none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numba import carray, njit, types

from ._errors import ExportError
from .shims import (
    BAD_LENGTH,
    SHIM_OPTIONS,
    Block,
    Family,
    _stack_double,
    index_names,
    locate_fields,
)

#: The blocks the alarm adds after the wrapped model's, in the struct's order.
ALARM_BLOCKS = ("drift_E", "drift_N", "drift_work", "drift_hyper", "drift_codes")


def _refuse(model: Any, inner: Any) -> None:
    """Raise ExportError for a wrapped model whose route is not there yet."""
    from ..bank import DFOPBank
    from ..dfop import DFOP

    name = type(inner).__name__
    if not ((isinstance(inner, DFOP) and name in ("DFOP", "RLS"))
            or (isinstance(inner, DFOPBank) and name == "DFOPBank")):
        raise ExportError(
            f"DriftAlarm over {name} cannot be exported yet: the alarm's export wraps the "
            "two-block models' shims (DFOP, RLS, the forgetting='auto' bank) only "
            "(docs/design/export.md, 'Not yet')")
    if inner._arith32:
        raise ExportError(
            f"DriftAlarm over a {name} with arithmetic='float32' cannot be exported: the "
            "alarm's test computes in float64 (its e-values call log and exp), so the "
            "object would not be float32 only; export the model with the default "
            "arithmetic")


def drift_family(model: Any, family_of: Callable[[Any], Family]) -> Family:
    """DriftAlarm: the wrapped model's family with the alarm's blocks after its own.
    ``family_of``: the exporter's (``families.family_of``, which imports this module)."""
    from .._kernels import compare_drift as kc
    from .._kernels import eprocess as ke

    inner = model.model
    _refuse(model, inner)
    base = family_of(inner)  # DFOP's, RLS's or the bank's (coverage, impute refused there)
    if len(base.blocks) != 2 or base.n_outputs or base.io != np.float64:
        raise ExportError(f"DriftAlarm over {type(inner).__name__}: unexpected model layout")
    compare = model.test == "compare"
    d = model.n_features
    alarm = {"drift_E": model._E, "drift_N": model._N, "drift_work": model._scratch,
             "drift_hyper": model._hyper, "drift_codes": model._codes}
    fresh_model = type(model)(**model.get_params())
    fresh = {"drift_E": fresh_model._E, "drift_N": fresh_model._N,
             "drift_work": fresh_model._scratch, "drift_hyper": fresh_model._hyper,
             "drift_codes": fresh_model._codes}
    blocks = dict(base.current, **alarm)
    family = Family(
        prefix=f"drift_{base.prefix}",
        d=d,
        dtype=base.dtype,
        task=base.task,
        blocks=[*base.blocks, *(Block(n, alarm[n].dtype, alarm[n].size,
                                      fresh[n].reshape(-1).copy()) for n in ALARM_BLOCKS)],
        fields=locate_fields(blocks, [(model._state, True), (model._work, False)]),
        hyper=base.hyper,
        codes=base.codes,
        current=blocks,
        forgetting=False,
    )
    k = kc if compare else ke
    hyper_names = index_names(k, "hyper")
    # eprocess's one code (the instance span, codes[0]) has no named constant.
    code_names = index_names(kc, "codes") if compare else {"CODE_SPAN": 0}
    family.c_api = _c_api(model, hyper_names, code_names)

    nE, nN, nW = model._E.size, model._N.size, model._scratch.size
    nh, nc = model._hyper.size, model._codes.size
    record, n_counts = ke.DRIFT_RECORD, ke.N_COUNTS
    inner_one, inner_many, inner_predict = (
        njit(inline="always", **SHIM_OPTIONS)(base.functions[c][0])
        for c in ("learn_one", "learn_many", "predict_one"))
    compare_run, eprocess_run = kc.compare_drift_run, ke.drift_run

    if compare:
        def alarm_rows(X, Y, M, rows, Ep, Np, Wp, Hp, Kp):
            compare_run(X, Y, M, rows, carray(Ep, (nE,)), carray(Np, (nN,)), carray(Wp, (nW,)),
                        carray(Hp, (nh,)), carray(Kp, (nc,)), record, n_counts)
    else:
        def alarm_rows(X, Y, M, rows, Ep, Np, Wp, Hp, Kp):
            eprocess_run(X, Y, M, rows, carray(Ep, (nE,)), carray(Np, (nN,)),
                         carray(Wp, (nW,)), carray(Hp, (nh,)), carray(Kp, (nc,)))

    alarm_rows = njit(inline="always", **SHIM_OPTIONS)(alarm_rows)

    # A row the model refuses: under on_invalid="skip" the class still hands it to
    # the test (which passes over what is not finite); under "raise" it raises
    # before the test, so the state is unchanged and the test must not see it.
    skip = inner.on_invalid == "skip"

    def learn_one(PWp, Bp, Ep, Np, Wp, Hp, Kp, xp, y, yhat_p):
        status = inner_one(PWp, Bp, xp, y, yhat_p)
        if status == 0 or skip:
            Y = carray(_stack_double(), (1,))
            Y[0] = y
            alarm_rows(carray(xp, (1, d)), Y, carray(yhat_p, (1,)), 1, Ep, Np, Wp, Hp, Kp)
        return status

    def learn_many(PWp, Bp, Ep, Np, Wp, Hp, Kp, Xp, Yp, n, mup, n_mu, outp):
        if n_mu != 0:
            return np.int64(BAD_LENGTH)  # the alarm's learn_many has no forgetting
        first = inner_many(PWp, Bp, Xp, Yp, n, mup, n_mu, outp)
        rows = n if first < 0 else first
        alarm_rows(carray(Xp, (n, d)), carray(Yp, (n,)), carray(outp, (n,)), rows, Ep, Np, Wp, Hp,
             Kp)
        return first

    def predict_one(PWp, Bp, Ep, Np, Wp, Hp, Kp, xp):
        return inner_predict(PWp, Bp, xp)

    f64, i64 = types.float64, types.int64
    pd, pi = types.CPointer(f64), types.CPointer(i64)
    extra = (pd, pi, pd, pd, pi)  # drift_E, drift_N, drift_work, drift_hyper, drift_codes
    sigs = {c: base.functions[c][1] for c in ("learn_one", "learn_many", "predict_one")}

    def widened(sig):  # the model's two blocks, the alarm's five, then the call's own
        return sig.return_type(*sig.args[:2], *extra, *sig.args[2:])

    family.functions = {"learn_one": (learn_one, widened(sigs["learn_one"])),
                        "learn_many": (learn_many, widened(sigs["learn_many"])),
                        "predict_one": (predict_one, widened(sigs["predict_one"]))}
    return family


def _c_api(model: Any, hyper_names: dict[str, int], code_names: dict[str, int]) -> list[str]:
    """The alarm's constants and readers, written into the header (``@prefix@`` and
    ``@PREFIX@`` are the export's name)."""
    from .._kernels.eprocess import COUNT_ALARMS, COUNT_SEEN, COUNT_SKIPPED, DRIFT_RECORD

    lines = [f"/* The drift alarm (test \"{model.test}\"): its blocks drift_E, drift_N,",
             " * drift_work, drift_hyper, drift_codes. drift_N holds the ring of the latest",
             " * alarms (the row index, among the rows tested, of each) then the counts.",
             " * drift_hyper (double) and drift_codes (int64_t) entries: index, value.",
             " * The test calls the C library's log, log1p and exp (link with -lm). */",
             f"#define @PREFIX@_ALARM_TEST_{model.test.upper()} 1",
             f"#define @PREFIX@_ALARM_RECORD {DRIFT_RECORD} /* entries of the ring */",
             f"#define @PREFIX@_ALARM_COUNT_TESTED {DRIFT_RECORD + COUNT_SEEN} "
             "/* drift_N index: rows tested */",
             f"#define @PREFIX@_ALARM_COUNT_SKIPPED {DRIFT_RECORD + COUNT_SKIPPED} "
             "/* drift_N index: rows beyond the test's limits */",
             f"#define @PREFIX@_ALARM_COUNT_ALARMS {DRIFT_RECORD + COUNT_ALARMS} "
             "/* drift_N index: alarms raised */"]
    for n, i in hyper_names.items():
        lines.append(f"#define @PREFIX@_ALARM_{n} {i} /* = {float(model._hyper[i])!r} */")
    for n, i in code_names.items():
        lines.append(f"#define @PREFIX@_ALARM_{n} {i} /* = {int(model._codes[i])} */")
    lines += [
        "/* Alarms raised since init (the class's n_drifts_). */",
        "static inline int64_t @prefix@_n_drifts(const @prefix@_state *s) {",
        "    return s->drift_N[@PREFIX@_ALARM_COUNT_ALARMS]; }",
        "/* Rows the test has seen (rows skipped by the model or beyond its limits excluded). */",
        "static inline int64_t @prefix@_n_tested(const @prefix@_state *s) {",
        "    return s->drift_N[@PREFIX@_ALARM_COUNT_TESTED]; }",
        "/* The index (among the rows tested) of the k-th latest alarm, k = 0 the latest,",
        " * or -1 when there is no such alarm (the ring keeps the latest",
        " * @PREFIX@_ALARM_RECORD). The class's drifts_[-1 - k]. */",
        "static inline int64_t @prefix@_drift_at(const @prefix@_state *s, int64_t k) {",
        "    int64_t n = @prefix@_n_drifts(s);",
        "    if (k < 0 || k >= n || k >= @PREFIX@_ALARM_RECORD) return -1;",
        "    return s->drift_N[(n - 1 - k) % @PREFIX@_ALARM_RECORD]; }",
        "/* The latest alarm's index, or -1 before any. */",
        "static inline int64_t @prefix@_last_drift(const @prefix@_state *s) {",
        "    return @prefix@_drift_at(s, 0); }",
    ]
    return lines
