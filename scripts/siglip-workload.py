#!/usr/bin/env python3
"""Generate the SigLIP vision-encoder MLP as torch-mlir exports it, in linalg.

The IR is the form that torch-mlir's fx importer followed by
`torch-backend-to-linalg-on-tensors-backend-pipeline` produces for

    h = fc1(x)                       # nn.Linear(dim, hidden), bias optional
    h = gelu(h, approximate="tanh")  # or erf / quick (x*sigmoid(1.702x)) / none
    y = fc2(h)                       # nn.Linear(hidden, dim), bias optional

repeated --blocks times (block i+1 reads block i's y; no residual, no norm).
It is derived from the torch-mlir sources (llvm/torch-mlir@0029fc2e; see
examples/exporters/ and their header comments for the file/line of every
pattern), not captured from a torch run.  Per nn.Linear the ops are:

    [f8/other weights only] linalg.generic  activation cast (arith.truncf/extf)
    linalg.transpose        W [out, in] -> [in, out], permutation = [1, 0]
    linalg.generic          broadcast W^T to [batch, in, out], map (d0,d1,d2)->(d1,d2)
    linalg.fill             0.0 : f32 into the [batch, tokens, out] accumulator
    linalg.batch_matmul     act x W^T -> f32 (f16 and f8 accumulate in f32)
    linalg.generic          arith.truncf f32 -> act dtype (absent for f32)
    linalg.generic          bias add, maps (d0,d1,d2)->(d0,d1,d2), (d2); body
                            arith.addf (the alpha=1 multiply folds away)

and the activation is one linalg.generic (tanh, erf) or three (quick: mul by
1.702, sigmoid, mul).  As after the pipeline's canonicalize + CSE, constants
sit at the function entry and identical tensor.empty / linalg.fill ops appear
once, at their first use.  Unlike a real export, weights and biases are
function arguments instead of frozen dense_resource constants, and the
function is named after the workload instead of @main.

f8 weights (--weights f8E4M3FN): the activation is cast to f8E4M3FN with an
arith.truncf generic before each matmul (a user's fp8 configuration), the
matmul takes f8 x f8 and accumulates in f32, and the result is truncf'd to
the activation dtype.  (Plain torch type promotion would make the result
f8; this follows the requested fp8 recipe instead.)  Biases stay in the
activation dtype.

Function signature (argument order):

    func.func @<name with '-' replaced by '_'>(
        %x: tensor<BxTxDxA>,
        then for each block i = 0 .. N-1:
          %b<i>_fc1_w: tensor<HxDxW>,   %b<i>_fc1_b: tensor<HxA>,
          %b<i>_fc2_w: tensor<DxHxW>,   %b<i>_fc2_b: tensor<DxA>)
        -> tensor<BxTxDxA>

with B=--batch, T=--tokens, D=--dim, H=--hidden, A=--dtype, W=--weights;
with --no-biases the _b arguments are left out (order otherwise unchanged).

Workload name:

    siglip-mlp-<A>[w<W>]-b<B>-t<T>-d<D>-h<H>-n<N>[-nobias][-gelu_<G>]

`w<W>` appears only when the weight dtype differs from the activation dtype
(w8 for f8E4M3FN, w16 / w32 for f16 / f32); `-nobias` with --no-biases;
`-gelu_<G>` when --gelu is not the default tanh (gelu_erf, gelu_quick,
gelu_none).  The default is siglip-mlp-f16-b1-t729-d1152-h4304-n1.

Usage:
    scripts/siglip-workload.py                 # default SigLIP MLP to stdout
    scripts/siglip-workload.py -o mlp.mlir --blocks 2 --weights f8E4M3FN
    scripts/siglip-workload.py --name --gelu erf
"""

import argparse
import sys

# Printed forms of the constants, exactly as MLIR prints them after the
# torch-mlir pipeline (values from TorchToLinalg/Uncategorized.cpp).
CONSTS = {
    "f16": {
        "alpha": "4.470830e-02",   # 0.044715
        "beta": "7.978520e-01",    # 0.7977240352174656 (torch-mlir's value)
        "one": "1.000000e+00",
        "half": "5.000000e-01",
        "two": "2.000000e+00",
    },
    "f32": {
        "alpha": "4.471500e-02",
        "beta": "7.977240e-01",
        "one": "1.000000e+00",
        "half": "5.000000e-01",
        "sqrt2": "1.41421354",     # math.sqrt(2.0) folds for f32 only
    },
}
WIDTH = {"f8E4M3FN": 8, "f16": 16, "f32": 32}
WEIGHT_SUFFIX = {"f8E4M3FN": "w8", "f16": "w16", "f32": "w32"}
GELUS = ("tanh", "erf", "quick", "none")

MAP_ID = "#map_id"
MAP_WB = "#map_wbcast"
MAP_BIAS = "#map_bias"
MAPS = [
    f"{MAP_ID} = affine_map<(d0, d1, d2) -> (d0, d1, d2)>",
    f"{MAP_WB} = affine_map<(d0, d1, d2) -> (d1, d2)>",
    f"{MAP_BIAS} = affine_map<(d0, d1, d2) -> (d2)>",
]
PAR3 = 'iterator_types = ["parallel", "parallel", "parallel"]'


def workload_name(a):
    name = f"siglip-{a.part}-{a.dtype}"
    if a.weights != a.dtype:
        name += WEIGHT_SUFFIX[a.weights]
    if a.part == "attention":
        name += f"-b{a.batch}-t{a.tokens}-d{a.dim}-a{a.heads}-n{a.blocks}"
    elif a.part == "block":
        name += f"-b{a.batch}-t{a.tokens}-d{a.dim}-a{a.heads}-h{a.hidden}-n{a.blocks}"
    else:
        name += f"-b{a.batch}-t{a.tokens}-d{a.dim}-h{a.hidden}-n{a.blocks}"
    if not a.biases:
        name += "-nobias"
    if a.gelu != "tanh":
        name += f"-gelu_{a.gelu}"
    return name


def tensor(shape, ty):
    return "tensor<" + "x".join(str(s) for s in shape) + f"x{ty}>"


class Emitter:
    def __init__(self):
        self.consts = {}      # key -> (ssa, text), emitted at function entry
        self.body = []
        self.empties = {}     # tensor type -> ssa (CSE'd tensor.empty)
        self.fills = {}       # tensor type -> ssa (CSE'd linalg.fill)
        self.n = 0

    def fresh(self, hint="v"):
        self.n += 1
        return f"%{hint}{self.n}"

    def const(self, key, text):
        if key not in self.consts:
            ssa = f"%cst_{len(self.consts)}"
            self.consts[key] = (ssa, f"{ssa} = arith.constant {text}")
        return self.consts[key][0]

    def emit(self, line):
        self.body.append("    " + line)

    def empty(self, ty):
        if ty not in self.empties:
            ssa = self.fresh("empty")
            self.emit(f"{ssa} = tensor.empty() : {ty}")
            self.empties[ty] = ssa
        return self.empties[ty]

    def zero_fill(self, ty):
        if ty not in self.fills:
            zero = self.const(("zero", "f32"), "0.000000e+00 : f32")
            out = self.empty(ty)
            ssa = self.fresh("fill")
            self.emit(f"{ssa} = linalg.fill ins({zero} : f32) outs({out} : {ty}) -> {ty}")
            self.fills[ty] = ssa
        return self.fills[ty]

    def generic(self, maps, ins, out_ty, in_elts, out_elt, body, hint="v"):
        """ins: list of (ssa, type). body: list of lines using %in, %in_0, ..."""
        out = self.empty(out_ty)
        ssa = self.fresh(hint)
        ins_s = ", ".join(s for s, _ in ins)
        ins_t = ", ".join(t for _, t in ins)
        args = ["%in"] + [f"%in_{i}" for i in range(len(ins) - 1)]
        bb = ", ".join(f"{n}: {e}" for n, e in zip(args, in_elts))
        # All-parallel loops, one per dim of the output.
        iterators = PAR4 if out_ty.count("x") == 4 else PAR3
        self.emit(f"{ssa} = linalg.generic {{indexing_maps = [{', '.join(maps)}], {iterators}}} "
                  f"ins({ins_s} : {ins_t}) outs({out} : {out_ty}) {{")
        self.emit(f"^bb0({bb}, %out: {out_elt}):")
        for line in body:
            self.emit("  " + line)
        self.emit(f"}} -> {out_ty}")
        return ssa


def convert_op(src, dst):
    """convertScalarToDtype for the float pairs used here."""
    return "arith.truncf" if WIDTH[src] > WIDTH[dst] else "arith.extf"


def linear(em, a, x, shape_in, out_features, w, b):
    """aten.linear(x, w, b) on x: [B, T, K] in a.dtype, w: [N, K] in a.weights."""
    B, T, K = shape_in
    N = out_features
    A, W = a.dtype, a.weights
    acc = "f32"  # getDefaultAccType: f16/f32/f8E4M3FN -> f32
    x_ty = tensor(shape_in, A)
    if W != A:
        # The activation is brought to the weight dtype before the matmul.
        xq_ty = tensor(shape_in, W)
        op = convert_op(A, W)
        x = em.generic([MAP_ID, MAP_ID], [(x, x_ty)], xq_ty, [A], W,
                       [f"%0 = {op} %in : {A} to {W}", f"linalg.yield %0 : {W}"], "xq")
        x_ty = xq_ty
    w_ty = tensor((N, K), W)
    wt_ty = tensor((K, N), W)
    wt_init = em.empty(wt_ty)
    wt = em.fresh("wt")
    em.emit(f"{wt} = linalg.transpose ins({w} : {w_ty}) outs({wt_init} : {wt_ty}) "
            f"permutation = [1, 0]")
    wb_ty = tensor((B, K, N), W)
    wb = em.generic([MAP_WB, MAP_ID], [(wt, wt_ty)], wb_ty, [W], W,
                    [f"linalg.yield %in : {W}"], "wb")
    acc_ty = tensor((B, T, N), acc)
    init = em.zero_fill(acc_ty)
    mm = em.fresh("mm")
    em.emit(f"{mm} = linalg.batch_matmul ins({x}, {wb} : {x_ty}, {wb_ty}) "
            f"outs({init} : {acc_ty}) -> {acc_ty}")
    y_ty = tensor((B, T, N), A)
    y = mm
    if acc != A:
        y = em.generic([MAP_ID, MAP_ID], [(mm, acc_ty)], y_ty, [acc], A,
                       [f"%0 = arith.truncf %in : {acc} to {A}", f"linalg.yield %0 : {A}"], "y")
    if b is not None:
        b_ty = tensor((N,), A)
        y = em.generic([MAP_ID, MAP_BIAS, MAP_ID], [(y, y_ty), (b, b_ty)], y_ty, [A, A], A,
                       [f"%0 = arith.addf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "yb")
    return y


def activation(em, a, h, shape):
    A = a.dtype
    ty = tensor(shape, A)
    c = CONSTS[A]
    if a.gelu == "none":
        return h
    if a.gelu == "tanh":
        c3 = em.const(("i64", 3), "3 : i64")
        ca = em.const((A, "alpha"), f"{c['alpha']} : {A}")
        cb = em.const((A, "beta"), f"{c['beta']} : {A}")
        c1 = em.const((A, "one"), f"{c['one']} : {A}")
        ch = em.const((A, "half"), f"{c['half']} : {A}")
        body = [
            f"%0 = math.fpowi %in, {c3} : {A}, i64",
            f"%1 = arith.mulf %0, {ca} : {A}",
            f"%2 = arith.addf %in, %1 : {A}",
            f"%3 = arith.mulf %2, {cb} : {A}",
            f"%4 = math.tanh %3 : {A}",
            f"%5 = arith.addf %4, {c1} : {A}",
            f"%6 = arith.mulf %5, {ch} : {A}",
            f"%7 = arith.mulf %in, %6 : {A}",
            f"linalg.yield %7 : {A}",
        ]
        return em.generic([MAP_ID, MAP_ID], [(h, ty)], ty, [A], A, body, "gelu")
    if a.gelu == "erf":
        c1 = em.const((A, "one"), f"{c['one']} : {A}")
        ch = em.const((A, "half"), f"{c['half']} : {A}")
        if A == "f32":
            s2 = em.const((A, "sqrt2"), f"{c['sqrt2']} : {A}")
            body = [f"%0 = arith.divf %in, {s2} : {A}"]
        else:
            c2 = em.const((A, "two"), f"{c['two']} : {A}")
            body = [f"%s = math.sqrt {c2} : {A}", f"%0 = arith.divf %in, %s : {A}"]
        body += [
            f"%1 = math.erf %0 : {A}",
            f"%2 = arith.addf %1, {c1} : {A}",
            f"%3 = arith.mulf %2, {ch} : {A}",
            f"%4 = arith.mulf %in, %3 : {A}",
            f"linalg.yield %4 : {A}",
        ]
        return em.generic([MAP_ID, MAP_ID], [(h, ty)], ty, [A], A, body, "gelu")
    # quick: x * sigmoid(1.702 * x) -> mul.Scalar, sigmoid, mul.Tensor
    k = em.const(("f64", "1.702"), "1.702000e+00 : f64")
    c1 = em.const((A, "one"), f"{c['one']} : {A}")
    s = em.generic([MAP_ID, MAP_ID], [(h, ty)], ty, [A], A,
                   [f"%0 = arith.truncf {k} : f64 to {A}",
                    f"%1 = arith.mulf %in, %0 : {A}",
                    f"linalg.yield %1 : {A}"], "qs")
    sig = em.generic([MAP_ID, MAP_ID], [(s, ty)], ty, [A], A,
                     [f"%0 = arith.negf %in : {A}",
                      f"%1 = math.exp %0 : {A}",
                      f"%2 = arith.addf %1, {c1} : {A}",
                      f"%3 = arith.divf {c1}, %2 : {A}",
                      f"linalg.yield %3 : {A}"], "sig")
    return em.generic([MAP_ID, MAP_ID, MAP_ID], [(h, ty), (sig, ty)], ty, [A, A], A,
                      [f"%0 = arith.mulf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "qg")


MAP_KEEP = "#map_keep"
MAP_ROWS = "#map_rows"
MAPS += [
    f"{MAP_KEEP} = affine_map<(d0, d1, d2) -> (d0, d1, 0)>",
    f"{MAP_ROWS} = affine_map<(d0, d1, d2) -> (d0, d1)>",
]
RED3 = 'iterator_types = ["parallel", "parallel", "reduction"]'


def row_sum(em, x, x_ty, shape, A):
    """aten.sum.dim_IntList(x, [-1], keepdim): a reduction generic whose
    output map keeps the reduced dim as 0 (examples/exporters/
    layernorm-torch-f32.mlir)."""
    B, T, _ = shape
    s_ty = tensor((B, T, 1), A)
    zero = em.const(("zero", A), f"0.000000e+00 : {A}")
    init = em.fresh("sinit")
    em.emit(f"{init} = linalg.fill ins({zero} : {A}) outs({em.empty(s_ty)} : {s_ty}) -> {s_ty}")
    ssa = em.fresh("sum")
    em.emit(f"{ssa} = linalg.generic {{indexing_maps = [{MAP_ID}, {MAP_KEEP}], {RED3}}} "
            f"ins({x} : {x_ty}) outs({init} : {s_ty}) {{")
    em.emit(f"^bb0(%in: {A}, %out: {A}):")
    em.emit(f"  %0 = arith.addf %in, %out : {A}")
    em.emit(f"  linalg.yield %0 : {A}")
    em.emit(f"}} -> {s_ty}")
    return ssa, s_ty


def row_broadcast(em, v, shape, A):
    """A [B, T, 1] statistic collapsed and copied onto [B, T, D], as
    torch-mlir materialises it before a binary op."""
    B, T, D = shape
    c_ty = tensor((B, T), A)
    c = em.fresh("col")
    em.emit(f"{c} = tensor.collapse_shape {v} [[0], [1, 2]] : {tensor((B, T, 1), A)} into {c_ty}")
    return em.generic([MAP_ROWS, MAP_ID], [(c, c_ty)], tensor(shape, A), [A], A,
                      [f"linalg.yield %in : {A}"], "bc")


def layer_norm(em, a, x, shape, w, b):
    """aten.layer_norm over the last dim, eps 1e-6 (SigLIP's), decomposed as
    torch-mlir's DecomposeAtenNativeLayerNormOp does: the mean, the centred
    values, the biased variance of them, rsqrt(var + eps), scale and bias
    (examples/exporters/layernorm-torch-f32.mlir, FORMS-reductions.md)."""
    A = a.dtype
    B, T, D = shape
    x_ty = tensor(shape, A)
    s_ty = tensor((B, T, 1), A)
    n = em.const(("n", A), f"{float(D):e} : {A}".replace("e+0", "e+0"))
    eps = em.const(("eps", "f64"), "9.9999999999999995E-7 : f64")
    s, _ = row_sum(em, x, x_ty, shape, A)
    mean = em.generic([MAP_ID, MAP_ID], [(s, s_ty)], s_ty, [A], A,
                      [f"%0 = arith.divf %in, {n} : {A}", f"linalg.yield %0 : {A}"], "mean")
    xc = em.generic([MAP_ID, MAP_ID, MAP_ID], [(x, x_ty), (row_broadcast(em, mean, shape, A), x_ty)],
                    x_ty, [A, A], A, [f"%0 = arith.subf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "xc")
    sq = em.generic([MAP_ID, MAP_ID, MAP_ID], [(xc, x_ty), (xc, x_ty)], x_ty, [A, A], A,
                    [f"%0 = arith.mulf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "sq")
    ss, _ = row_sum(em, sq, x_ty, shape, A)
    var = em.generic([MAP_ID, MAP_ID], [(ss, s_ty)], s_ty, [A], A,
                     [f"%0 = arith.divf %in, {n} : {A}", f"linalg.yield %0 : {A}"], "var")
    ve = em.generic([MAP_ID, MAP_ID], [(var, s_ty)], s_ty, [A], A,
                    [f"%0 = arith.truncf {eps} : f64 to {A}", f"%1 = arith.addf %in, %0 : {A}",
                     f"linalg.yield %1 : {A}"], "ve")
    r = em.generic([MAP_ID, MAP_ID], [(ve, s_ty)], s_ty, [A], A,
                   [f"%0 = math.rsqrt %in : {A}", f"linalg.yield %0 : {A}"], "rstd")
    y = em.generic([MAP_ID, MAP_ID, MAP_ID], [(xc, x_ty), (row_broadcast(em, r, shape, A), x_ty)],
                   x_ty, [A, A], A, [f"%0 = arith.mulf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "nrm")
    v_ty = tensor((D,), A)
    y = em.generic([MAP_ID, MAP_BIAS, MAP_ID], [(y, x_ty), (w, v_ty)], x_ty, [A, A], A,
                   [f"%0 = arith.mulf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "lnw")
    return em.generic([MAP_ID, MAP_BIAS, MAP_ID], [(y, x_ty), (b, v_ty)], x_ty, [A, A], A,
                      [f"%0 = arith.addf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "lnb")


MAP4_ID = "#map4_id"
MAP4_ROWS = "#map4_rows"
MAP4_KEEP = "#map4_keep"
MAPS += [
    f"{MAP4_ID} = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>",
    f"{MAP4_ROWS} = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>",
    f"{MAP4_KEEP} = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>",
]
PAR4 = 'iterator_types = ["parallel", "parallel", "parallel", "parallel"]'
RED4 = 'iterator_types = ["parallel", "parallel", "parallel", "reduction"]'


def heads(em, v, B, T, H, Dh, A, perm):
    """view(B, T, H, Dh).permute(perm): expand_shape, then linalg.transpose
    (examples/exporters/attention-torch-f32.mlir)."""
    e = em.fresh("split")
    em.emit(f"{e} = tensor.expand_shape {v} [[0], [1], [2, 3]] output_shape [{B}, {T}, {H}, {Dh}] "
            f": {tensor((B, T, H * Dh), A)} into {tensor((B, T, H, Dh), A)}")
    src = (B, T, H, Dh)
    shape = tuple(src[p] for p in perm)
    ty = tensor(shape, A)
    t = em.fresh("heads")
    em.emit(f"{t} = linalg.transpose ins({e} : {tensor(src, A)}) outs({em.empty(ty)} : {ty}) "
            f"permutation = [{', '.join(str(p) for p in perm)}]")
    return t, shape


def batch_matmul(em, a, lhs, lhs_shape, rhs, rhs_shape, hint):
    """torch.matmul of [B, H, M, K] and [B, H, K, N]: collapsed to B * H
    batches, batch_matmul accumulating in f32, truncated to the dtype,
    expanded back."""
    A = a.dtype
    B, H, M, K = lhs_shape
    N = rhs_shape[3]
    cl, cr = em.fresh("cl"), em.fresh("cr")
    em.emit(f"{cl} = tensor.collapse_shape {lhs} [[0, 1], [2], [3]] : {tensor(lhs_shape, A)} "
            f"into {tensor((B * H, M, K), A)}")
    em.emit(f"{cr} = tensor.collapse_shape {rhs} [[0, 1], [2], [3]] : {tensor(rhs_shape, A)} "
            f"into {tensor((B * H, K, N), A)}")
    acc_ty = tensor((B * H, M, N), "f32")
    init = em.zero_fill(acc_ty)
    mm = em.fresh(hint)
    em.emit(f"{mm} = linalg.batch_matmul ins({cl}, {cr} : {tensor((B * H, M, K), A)}, "
            f"{tensor((B * H, K, N), A)}) outs({init} : {acc_ty}) -> {acc_ty}")
    y, y_ty = mm, acc_ty
    if A != "f32":
        y_ty = tensor((B * H, M, N), A)
        y = em.generic([MAP_ID, MAP_ID], [(mm, acc_ty)], y_ty, ["f32"], A,
                       [f"%0 = arith.truncf %in : f32 to {A}", f"linalg.yield %0 : {A}"], "mmt")
    ex = em.fresh("ex")
    em.emit(f"{ex} = tensor.expand_shape {y} [[0, 1], [2], [3]] output_shape [{B}, {H}, {M}, {N}] "
            f": {y_ty} into {tensor((B, H, M, N), A)}")
    return ex


def softmax_f32(em, a, s, shape):
    """softmax(dim=-1, dtype=float32).to(dtype) as torch-mlir decomposes
    it: max.dim (with its unused argmax, -inf init), x - max, exp, the sum
    (keepdim by a 0 map), the division (examples/exporters/softmax-torch-*)."""
    A = a.dtype
    B, H, T, N = shape
    ty32 = tensor(shape, "f32")
    if A != "f32":
        s = em.generic([MAP4_ID, MAP4_ID], [(s, tensor(shape, A))], ty32, [A], "f32",
                     [f"%0 = arith.extf %in : {A} to f32", "linalg.yield %0 : f32"], "up")
    rows_ty = tensor((B, H, T), "f32")
    idx_ty = tensor((B, H, T), "i64")
    ninf = em.const(("ninf", "f32"), "0xFF800000 : f32")
    c0 = em.const(("zero", "i64"), "0 : i64")
    mi, ii = em.fresh("maxinit"), em.fresh("idxinit")
    em.emit(f"{mi} = linalg.fill ins({ninf} : f32) outs({em.empty(rows_ty)} : {rows_ty}) -> {rows_ty}")
    em.emit(f"{ii} = linalg.fill ins({c0} : i64) outs({em.empty(idx_ty)} : {idx_ty}) -> {idx_ty}")
    mx = em.fresh("max")
    em.emit(f"{mx}:2 = linalg.generic {{indexing_maps = [{MAP4_ID}, {MAP4_ROWS}, {MAP4_ROWS}], {RED4}}} "
            f"ins({s} : {ty32}) outs({mi}, {ii} : {rows_ty}, {idx_ty}) {{")
    em.emit("^bb0(%in: f32, %out: f32, %out_0: i64):")
    em.emit("  %0 = linalg.index 3 : index")
    em.emit("  %1 = arith.index_cast %0 : index to i64")
    em.emit("  %2 = arith.maximumf %in, %out : f32")
    em.emit("  %3 = arith.cmpf ogt, %in, %out : f32")
    em.emit("  %4 = arith.select %3, %1, %out_0 : i64")
    em.emit("  linalg.yield %2, %4 : f32, i64")
    em.emit(f"}} -> ({rows_ty}, {idx_ty})")
    keep_ty = tensor((B, H, T, 1), "f32")
    mk = em.fresh("maxk")
    em.emit(f"{mk} = tensor.expand_shape {mx}#0 [[0], [1], [2, 3]] output_shape [{B}, {H}, {T}, 1] "
            f": {rows_ty} into {keep_ty}")
    d = em.generic([MAP4_ID, MAP4_KEEP, MAP4_ID], [(s, ty32), (mk, keep_ty)], ty32, ["f32", "f32"],
                 "f32", ["%0 = arith.subf %in, %in_0 : f32", "linalg.yield %0 : f32"], "shift")
    e = em.generic([MAP4_ID, MAP4_ID], [(d, ty32)], ty32, ["f32"], "f32",
                 ["%0 = math.exp %in : f32", "linalg.yield %0 : f32"], "exp")
    zero = em.const(("zero", "f32"), "0.000000e+00 : f32")
    si = em.fresh("suminit")
    em.emit(f"{si} = linalg.fill ins({zero} : f32) outs({em.empty(keep_ty)} : {keep_ty}) -> {keep_ty}")
    sm = em.fresh("sum")
    em.emit(f"{sm} = linalg.generic {{indexing_maps = [{MAP4_ID}, {MAP4_KEEP}], {RED4}}} "
            f"ins({e} : {ty32}) outs({si} : {keep_ty}) {{")
    em.emit("^bb0(%in: f32, %out: f32):")
    em.emit("  %0 = arith.addf %in, %out : f32")
    em.emit("  linalg.yield %0 : f32")
    em.emit(f"}} -> {keep_ty}")
    p = em.generic([MAP4_ID, MAP4_KEEP, MAP4_ID], [(e, ty32), (sm, keep_ty)], ty32, ["f32", "f32"],
                 "f32", ["%0 = arith.divf %in, %in_0 : f32", "linalg.yield %0 : f32"], "probs")
    if A != "f32":
        p = em.generic([MAP4_ID, MAP4_ID], [(p, ty32)], tensor(shape, A), ["f32"], A,
                     [f"%0 = arith.truncf %in : f32 to {A}", f"linalg.yield %0 : {A}"], "down")
    return p


def attention(em, a, x, shape, blk):
    """HF SiglipAttention (eager): q, k, v projections, heads split, q k^T
    scaled by Dh^-0.5, softmax in f32, times v, heads merged, out projection
    (examples/exporters/attention-torch-f32.mlir for the forms)."""
    A = a.dtype
    B, T, D = shape
    H = a.heads
    Dh = D // H
    q = linear(em, a, x, shape, D, blk["q_w"], blk["q_b"])
    k = linear(em, a, x, shape, D, blk["k_w"], blk["k_b"])
    v = linear(em, a, x, shape, D, blk["v_w"], blk["v_b"])
    qh, qs = heads(em, q, B, T, H, Dh, A, (0, 2, 1, 3))
    kh, ks = heads(em, k, B, T, H, Dh, A, (0, 2, 3, 1))
    vh, vs = heads(em, v, B, T, H, Dh, A, (0, 2, 1, 3))
    s = batch_matmul(em, a, qh, qs, kh, ks, "scores")
    scale = em.const(("f64", "scale"), f"{Dh ** -0.5!r} : f64")
    sc_shape = (B, H, T, T)
    s = em.generic([MAP4_ID, MAP4_ID], [(s, tensor(sc_shape, A))], tensor(sc_shape, A), [A], A,
                 [f"%0 = arith.truncf {scale} : f64 to {A}", f"%1 = arith.mulf %in, %0 : {A}",
                  f"linalg.yield %1 : {A}"], "scaled")
    p = softmax_f32(em, a, s, sc_shape)
    o = batch_matmul(em, a, p, sc_shape, vh, vs, "ctx")
    ot_ty = tensor((B, T, H, Dh), A)
    ot = em.fresh("merge")
    em.emit(f"{ot} = linalg.transpose ins({o} : {tensor((B, H, T, Dh), A)}) outs({em.empty(ot_ty)} "
            f": {ot_ty}) permutation = [0, 2, 1, 3]")
    om = em.fresh("merged")
    em.emit(f"{om} = tensor.collapse_shape {ot} [[0], [1], [2, 3]] : {ot_ty} into {tensor(shape, A)}")
    return linear(em, a, om, shape, D, blk["o_w"], blk["o_b"])


def generate(a):
    name = workload_name(a)
    B, T, D, H = a.batch, a.tokens, a.dim, a.hidden
    A, W = a.dtype, a.weights
    args = [("%x", tensor((B, T, D), A))]
    blocks = []
    for i in range(a.blocks):
        p = f"%b{i}_"
        names = {"fc1_w": (p + "fc1_w", tensor((H, D), W)),
                 "fc1_b": (p + "fc1_b", tensor((H,), A)),
                 "fc2_w": (p + "fc2_w", tensor((D, H), W)),
                 "fc2_b": (p + "fc2_b", tensor((D,), A))}
        order = ["fc1_w", "fc1_b", "fc2_w", "fc2_b"] if a.biases else ["fc1_w", "fc2_w"]
        mlp_order = order
        if a.part in ("attention", "block"):
            for key in ("q", "k", "v", "o"):
                names[key + "_w"] = (p + key + "_w", tensor((D, D), W))
                names[key + "_b"] = (p + key + "_b", tensor((D,), A))
            order = [k + s for k in ("q", "k", "v", "o") for s in ("_w", "_b")
                     if a.biases or s == "_w"]
        if a.part in ("ln-mlp", "block"):
            names["ln_w"] = (p + "ln_w", tensor((D,), A))
            names["ln_b"] = (p + "ln_b", tensor((D,), A))
            order = ["ln_w", "ln_b"] + (mlp_order if a.part == "ln-mlp" else order)
        if a.part == "block":
            # HF SiglipEncoderLayer: layer_norm1, attention, residual,
            # layer_norm2, MLP, residual.
            names["ln2_w"] = (p + "ln2_w", tensor((D,), A))
            names["ln2_b"] = (p + "ln2_b", tensor((D,), A))
            order = order + ["ln2_w", "ln2_b"] + mlp_order
        args += [names[k] for k in order]
        blocks.append({k: (names[k][0] if k in order else None) for k in names})

    em = Emitter()
    x = "%x"
    for i, blk in enumerate(blocks):
        x_ty = tensor((B, T, D), A)
        if a.part == "attention":
            em.body.append(f"    // block {i}: attention ({a.heads} heads of {D // a.heads})")
            x = attention(em, a, x, (B, T, D), blk)
            continue
        if a.part == "block":
            residual = x
            em.body.append(f"    // block {i}: layer norm 1, attention ({a.heads} heads), residual")
            x = layer_norm(em, a, x, (B, T, D), blk["ln_w"], blk["ln_b"])
            x = attention(em, a, x, (B, T, D), blk)
            x = em.generic([MAP_ID, MAP_ID, MAP_ID], [(residual, x_ty), (x, x_ty)], x_ty, [A, A], A,
                           [f"%0 = arith.addf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "res")
        residual = x
        if a.part in ("ln-mlp", "block"):
            em.body.append(f"    // block {i}: layer norm")
            ln = ("ln2_w", "ln2_b") if a.part == "block" else ("ln_w", "ln_b")
            x = layer_norm(em, a, x, (B, T, D), blk[ln[0]], blk[ln[1]])
        em.body.append(f"    // block {i}: fc1 ({D} -> {H})")
        h = linear(em, a, x, (B, T, D), H, blk["fc1_w"], blk["fc1_b"])
        if a.gelu != "none":
            em.body.append(f"    // block {i}: gelu ({a.gelu})")
        h = activation(em, a, h, (B, T, H))
        em.body.append(f"    // block {i}: fc2 ({H} -> {D})")
        x = linear(em, a, h, (B, T, H), D, blk["fc2_w"], blk["fc2_b"])
        if a.part in ("ln-mlp", "block"):
            em.body.append(f"    // block {i}: residual")
            x = em.generic([MAP_ID, MAP_ID, MAP_ID], [(residual, x_ty), (x, x_ty)], x_ty, [A, A], A,
                           [f"%0 = arith.addf %in, %in_0 : {A}", f"linalg.yield %0 : {A}"], "res")

    out_ty = tensor((B, T, D), A)
    fname = name.replace("-", "_")
    lines = [f"// workload: {name}",
             f"// SigLIP vision {a.part} in the torch-mlir fx-importer +",
             "// torch-backend-to-linalg-on-tensors-backend-pipeline form (derived,",
             "// see scripts/siglip-workload.py and examples/exporters/).",
             "// args: " + ", ".join(n[1:] for n, _ in args)]
    lines += MAPS
    lines.append("module {")
    sig = ", ".join(f"{n}: {t}" for n, t in args)
    lines.append(f"  func.func @{fname}({sig}) -> {out_ty} {{")
    lines += ["    " + text + "" for _, text in em.consts.values()]
    lines += em.body
    lines.append(f"    return {x} : {out_ty}")
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Generate SigLIP encoder parts (MLP, its layer-norm half, "
                    "attention) in torch-mlir's linalg export form.")
    p.add_argument("--tokens", type=int, default=729)
    p.add_argument("--dim", type=int, default=1152)
    p.add_argument("--hidden", type=int, default=4304)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dtype", choices=("f16", "f32"), default="f16",
                   help="activation (and bias) dtype")
    p.add_argument("--weights", choices=("f16", "f32", "f8E4M3FN"), default=None,
                   help="weight dtype (default: same as --dtype)")
    p.add_argument("--biases", dest="biases", action="store_true", default=True)
    p.add_argument("--no-biases", dest="biases", action="store_false")
    p.add_argument("--gelu", choices=GELUS, default="tanh")
    p.add_argument("--blocks", type=int, default=1)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--part", choices=("mlp", "ln-mlp", "attention", "block"), default="mlp",
                   help="mlp: fc1, GELU, fc2; ln-mlp: the encoder block's MLP half, "
                        "x + mlp(layer_norm(x)); attention; block: the encoder layer, "
                        "x + attention(ln1(x)), then its MLP half")
    p.add_argument("--name", action="store_true", help="print only the workload name")
    p.add_argument("-o", "--output", help="write to FILE instead of stdout")
    a = p.parse_args(argv)
    if a.weights is None:
        a.weights = a.dtype
    for k in ("tokens", "dim", "hidden", "batch", "blocks", "heads"):
        if getattr(a, k) < 1:
            p.error(f"--{k} must be >= 1")
    if a.dim % a.heads:
        p.error(f"--dim {a.dim} is not a multiple of --heads {a.heads}")
    if a.name:
        print(workload_name(a))
        return 0
    text = generate(a)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
