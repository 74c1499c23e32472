"""Exports PyTorch models to linalg on tensors for the IPU compiler.

The model goes through torch.export and torch-mlir's fx importer, and what
the compiler and its checks need is written to one directory:

  model.mlir             the module, in MLIR's generic op form: the form
                         that survives the version skew between torch-mlir's
                         MLIR and the compiler's (LLVM 22); weights stay
                         inside it as dense_resource constants, which the
                         compiler carries into the package; the first
                         input's batch dimension is marked on it
                         (`ipu_tile.batch_dim`, see batch_dim_of), which
                         `ipu-run` counts a batch's images by
  inputs/arg<i>.npy      the example inputs, in the shapes the function
                         takes: what `ipu-run --inputs DIR/inputs` reads
  expected/result<i>.npy PyTorch's own eager outputs for them: what
                         `ipu-run --expect DIR/expected` compares with
  expected-f32/          with --weights: the unquantised model's outputs in
                         f32 (rounded to the results' type), for how far a
                         quantised model lies from it
  scales.json            with f8 activations: each linear's activation and
                         weight scales and what calibration saw (with f8
                         attention, its operands' scales under "attention")
  weights/<name>.npy     the model's parameters and buffers, by state-dict
                         name

Only a Python bridge: the compiler, the runtime and the checks are C++.
"""

import copy
import dataclasses
import re
import importlib.util
import os
from typing import Callable, Dict, List, Optional, Sequence

import numpy as np
import torch


DTYPES = {"f32": torch.float32, "f16": torch.float16}

# Weight formats for --weights: the f8 format and its largest finite value.
# f8E4M3FNUZ is the IPU's own 1-4-3 format (bias 8, no infinities, no
# negative zero, largest 240: Graphcore's "F143"); f8E4M3FN is OCP's
# (bias 7, largest 448).
F8_WEIGHTS = {
    "f8E4M3FN": (torch.float8_e4m3fn, 448.0),
    "f8E4M3FNUZ": (torch.float8_e4m3fnuz, 240.0),
}


@dataclasses.dataclass
class Exported:
    """What export() wrote, for callers and reports."""

    directory: str
    inputs: List[np.ndarray]
    outputs: List[np.ndarray]
    weights: Dict[str, np.ndarray]
    mlir_bytes: int
    # With --weights: PyTorch's quantised model against the f32 one, all
    # results together (maximumAbsoluteError, cosineSimilarity).
    quantisation: dict = None
    batch_dim: Optional[int] = None  # the first input's marked batch dimension


def _parse_field(key: str, current, text: str):
    """`text` as the type of the config field's current value (bool("False")
    would be True: booleans are spelled out)."""
    if isinstance(current, bool):
        if text.lower() not in ("true", "false", "1", "0"):
            raise SystemExit(f"ipu_export: field '{key}' is a bool: give true or false, not '{text}'")
        return text.lower() in ("true", "1")
    return type(current)(text) if current is not None else text


def siglip_vision(overrides: Dict[str, str], seed: int) -> torch.nn.Module:
    """transformers' SiglipVisionModel built from a config: so400m-patch14-384
    unless `overrides` (config field -> value) say otherwise, random weights
    from `seed`, nothing downloaded."""
    from transformers import SiglipVisionConfig, SiglipVisionModel

    config = SiglipVisionConfig(
        hidden_size=1152,
        intermediate_size=4304,
        num_hidden_layers=27,
        num_attention_heads=16,
        image_size=384,
        patch_size=14,
    )
    for key, text in overrides.items():
        if not hasattr(config, key):
            raise SystemExit(f"ipu_export: SiglipVisionConfig has no field '{key}'")
        setattr(config, key, _parse_field(key, getattr(config, key), text))
    torch.manual_seed(seed)
    return SiglipVisionModel(config).eval()


class _EncoderLayer(torch.nn.Module):
    """One SiglipEncoderLayer on hidden states [N, tokens, width]."""

    def __init__(self, layer: torch.nn.Module):
        super().__init__()
        self.layer = layer

    def forward(self, hidden):
        out = self.layer(hidden, attention_mask=None)
        return out[0] if isinstance(out, tuple) else out


def siglip_encoder_layer(overrides: Dict[str, str], seed: int) -> torch.nn.Module:
    """The first encoder layer of siglip_vision's model (the same config and
    overrides): what one of so400m's 27 layers computes on [N, 729, 1152]."""
    model = siglip_vision(overrides, seed)
    return _EncoderLayer(model.encoder.layers[0]).eval()


BUILT_IN: Dict[str, Callable[[Dict[str, str], int], torch.nn.Module]] = {
    "siglip-vision": siglip_vision,
    "siglip-encoder-layer": siglip_encoder_layer,
}


def load_model(spec: str, overrides: Dict[str, str], seed: int) -> torch.nn.Module:
    """A built-in model by name, or `file.py:factory` (factory() returns the
    module; overrides are passed as keyword strings)."""
    if spec in BUILT_IN:
        return BUILT_IN[spec](overrides, seed)
    path, sep, factory = spec.rpartition(":")
    if not sep or not path.endswith(".py"):
        raise SystemExit(
            f"ipu_export: '{spec}' is neither a built-in model "
            f"({', '.join(BUILT_IN)}) nor file.py:factory")
    module_spec = importlib.util.spec_from_file_location("ipu_export_user", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    torch.manual_seed(seed)
    return getattr(module, factory)(**overrides).eval()


class QuantizedLinear(torch.nn.Module):
    """A linear layer whose weight is stored in f8 with one power-of-two
    scale per tensor, as the user's stack quantises weights: the scale is
    2^ceil(log2(max|w| / largest)), so the largest magnitude lands at or
    below the format's largest finite value, and the f8 values times the
    scale are exact in f16. forward() expands the weight to the activation's
    type and scales it before the linear, so the exported graph carries the
    f8 tensor and the expansion, and PyTorch's eager output is what the
    quantised model computes.

    With an activation scale (calibrate_activations), the input is
    quantised too: divided by its power-of-two scale, clamped to the
    format's range and rounded to f8. Both f8 operands are widened to the
    activation's type and multiplied back by their scales (exact for powers
    of two) before the linear: the compiler sees a linear of two scaled,
    widened f8 tensors, a native f8 matmul whose AMP applies the scales to
    the products (its partial sums are in real units, as PyTorch's)."""

    def __init__(self, linear: torch.nn.Linear, f8_dtype: torch.dtype, largest: float):
        super().__init__()
        weight = linear.weight.detach().float()
        magnitude = weight.abs().max().item()
        self.scale = power_of_two_scale(magnitude, largest)
        self.weight8 = torch.nn.Parameter((weight / self.scale).to(f8_dtype), requires_grad=False)
        self.bias = linear.bias
        self.f8_dtype = f8_dtype
        self.largest = largest
        self.activation_scale = None
        self.calibrated_magnitude = None  # set while calibrating
        self.calibrated_partial = None

    def forward(self, x):
        if self.calibrated_magnitude is not None:
            magnitude = x.detach().abs().float()
            self.calibrated_magnitude = max(self.calibrated_magnitude, magnitude.max().item())
            # The largest sum of |x| |w8| over K: every partial sum of the
            # product in the weight's f8 units, before x is scaled.
            partial = (magnitude.reshape(-1, magnitude.shape[-1]) @
                       self.weight8.float().abs().t()).max().item()
            self.calibrated_partial = max(self.calibrated_partial, partial)
        if self.activation_scale is None:
            weight = self.weight8.to(x.dtype) * self.scale
            return torch.nn.functional.linear(x, weight, self.bias)
        quantised = (x * (1.0 / self.activation_scale)).clamp(-self.largest, self.largest)
        x8 = quantised.to(self.f8_dtype)
        # Both operands back in real units (exact: powers of two), as the
        # AMP takes f8 inputs with a scale (the IPU21's input scale
        # register): the partial sums are the product's own values.
        return torch.nn.functional.linear(x8.to(x.dtype) * self.activation_scale,
                                          self.weight8.to(x.dtype) * self.scale, self.bias)


def power_of_two_scale(magnitude: float, largest: float) -> float:
    """2^ceil(log2(magnitude / largest)): `magnitude` lands at or below
    `largest` after division by it (1 for a zero tensor)."""
    if magnitude <= 0 or not np.isfinite(magnitude):
        return 1.0
    return float(2.0 ** int(np.ceil(np.log2(magnitude / largest))))


class F8Attention:
    """Eager attention with its four matmul operands in f8: the query, key
    and value (one power-of-two scale for the three, calibrated at export
    like the linears' inputs, across layers) and the softmax's
    probabilities (scale 2^-8: a probability is at most 1, which lands at
    256, below E4M3's 448, so they need no clamp). Each operand is quantised
    as QuantizedLinear quantises its input, then widened and scaled back:
    the compiler sees matmuls of scaled, widened f8 tensors, native f8
    products. The softmax, whose probabilities f8 rounds to 3 mantissa bits
    anyway, takes its exponentials in f16 (f32's cost 3 times the
    instructions an element) and sums them in f32.

    The query, key and value are quantised where their projections
    (`q_proj`, `k_proj`, `v_proj`) write them, before the heads are split
    off, so that the split moves f8; attention modules without such
    projections have them quantised in the attention function. That
    function replaces a transformers modelling module's
    `eager_attention_forward` while the model is exported (install and
    restore), so it applies to every model whose attention calls it with
    `_attn_implementation=eager`."""

    ROLES = ("query", "key", "value")
    PROJECTIONS = ("q_proj", "k_proj", "v_proj")

    def __init__(self, f8_dtype: torch.dtype, largest: float):
        self.f8_dtype = f8_dtype
        self.largest = largest
        self.scales: Dict[str, float] = {}
        self.probability_scale = power_of_two_scale(1.0, largest)
        self.magnitudes: Optional[Dict[str, float]] = None  # set while calibrating
        self.patched: List[tuple] = []
        self.hooks: List = []
        self.projected = set()  # attention modules whose projections quantise
        self.original = None
        self.calls = 0  # attention runs through it: none means it was not used

    def install(self, model: torch.nn.Module) -> int:
        """Patches the modelling modules of `model`'s submodules that define
        eager_attention_forward and hooks the projections; returns how many
        modelling modules were patched."""
        import sys
        for sub in model.modules():
            module = sys.modules.get(type(sub).__module__)
            eager = getattr(module, "eager_attention_forward", None)
            if eager is not None and eager is not self and \
                    not any(m is module for m, _ in self.patched):
                self.patched.append((module, eager))
                self.original = eager
                module.eager_attention_forward = self
            if all(isinstance(getattr(sub, name, None), torch.nn.Module)
                   for name in self.PROJECTIONS):
                self.projected.add(id(sub))
                for role, name in zip(self.ROLES, self.PROJECTIONS):
                    self.hooks.append(getattr(sub, name).register_forward_hook(
                        lambda _, __, output, role=role: self.observe(role, output)))
        return len(self.patched)

    def restore(self) -> None:
        for module, eager in self.patched:
            module.eager_attention_forward = eager
        for hook in self.hooks:
            hook.remove()
        self.patched, self.hooks = [], []

    def quantise(self, x: torch.Tensor, scale: float, clamp: bool = True) -> torch.Tensor:
        scaled = x * (1.0 / scale)
        if clamp:
            scaled = scaled.clamp(-self.largest, self.largest)
        return scaled.to(self.f8_dtype).to(x.dtype) * scale

    def observe(self, role: str, tensor: torch.Tensor) -> Optional[torch.Tensor]:
        """While calibrating, notes `tensor`'s largest magnitude (and leaves
        it be); afterwards, `tensor` quantised with its role's scale."""
        if self.magnitudes is not None:
            self.magnitudes[role] = max(self.magnitudes[role],
                                        tensor.detach().abs().float().max().item())
            return None
        return self.quantise(tensor, self.scales[role])

    def calibrated(self, headroom: float) -> Dict[str, dict]:
        # One scale for the query, key and value: one tensor where their
        # projections run as one matmul, so one quantisation of it (a
        # floating-point format loses no precision on the smaller ones
        # unless they reach its subnormals).
        largest = max(self.magnitudes.values())
        scales = {}
        for role in self.ROLES:
            self.scales[role] = power_of_two_scale(largest * headroom, self.largest)
            scales[role] = {"activationScale": self.scales[role],
                            "calibratedMagnitude": self.magnitudes[role]}
        scales["probabilities"] = {"activationScale": self.probability_scale}
        self.magnitudes = None
        return scales

    def __call__(self, module, query, key, value, attention_mask, scaling, dropout=0.0,
                 **kwargs):
        self.calls += 1
        if id(module) not in self.projected:
            for role, tensor in zip(self.ROLES, (query, key, value)):
                quantised = self.observe(role, tensor)
                if quantised is not None:
                    query, key, value = (quantised if r == role else t for r, t in
                                         zip(self.ROLES, (query, key, value)))
        if self.magnitudes is not None:
            return self.original(module, query, key, value, attention_mask, scaling,
                                 dropout=dropout, **kwargs)
        weights = torch.matmul(query, key.transpose(-1, -2)) * scaling
        if attention_mask is not None:
            weights = weights + attention_mask
        # The exponentials in f16 (their inputs are at most 0, so their
        # results lie in [0, 1]), summed in f32, scaled by the sums'
        # reciprocals in f16.
        shifted = weights - weights.max(dim=-1, keepdim=True).values
        exponentials = torch.exp(shifted)
        sums = exponentials.sum(dim=-1, keepdim=True, dtype=torch.float32)
        # (A division, not reciprocal(): torch-mlir guards that with a
        # run-time assertion.)
        weights = exponentials * (torch.ones_like(sums) / sums).to(query.dtype)
        probabilities = self.quantise(weights, self.probability_scale, clamp=False)
        output = torch.matmul(probabilities, value).transpose(1, 2).contiguous()
        return output, weights


class F16LayerNorms:
    """With f8 activations, f16 layer norms apply their statistics in f16:
    the statistics (mean, variance, 1/sqrt) stay f32; the centring, scale
    and shift run on f16 values (4 a vector on the IPU, against f32's 2),
    which the linears reading them round to f8's 3 mantissa bits. The
    mean is split in two f16 parts (its f16 value and the rest), so that
    centring an input whose mean is large against its spread loses no
    more than f16's rounding of the centred value. The result is
    contiguous, as LayerNorm's is (a linear flattens a contiguous 3-D
    input into one matmul with its bias). Each module's forward is
    replaced while the model is calibrated and exported (install and
    restore); PyTorch computes the same expressions."""

    def __init__(self):
        self.patched: List[torch.nn.Module] = []

    def install(self, model: torch.nn.Module) -> int:
        import types
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm) and len(module.normalized_shape) == 1:
                module.forward = types.MethodType(F16LayerNorms.forward, module)
                self.patched.append(module)
        return len(self.patched)

    def restore(self) -> None:
        for module in self.patched:
            del module.forward
        self.patched = []

    @staticmethod
    def forward(module: torch.nn.LayerNorm, x: torch.Tensor) -> torch.Tensor:
        if x.dtype != torch.float16:
            return torch.nn.LayerNorm.forward(module, x)
        x = x.contiguous()
        wide = x.float()
        mean = wide.mean(dim=-1, keepdim=True)
        variance = ((wide - mean) ** 2).mean(dim=-1, keepdim=True)
        scale = torch.rsqrt(variance + module.eps).to(x.dtype)
        mean_high = mean.to(x.dtype)
        mean_low = (mean - mean_high.float()).to(x.dtype)
        y = ((x - mean_high) - mean_low) * scale
        if module.weight is not None:
            y = y * module.weight
        if module.bias is not None:
            y = y + module.bias
        return y


def calibrate_activations(model: torch.nn.Module, inputs: Sequence[torch.Tensor],
                          headroom: float = 2.0,
                          attention: Optional[F8Attention] = None) -> Dict[str, dict]:
    """Runs `model` on `inputs` and gives every QuantizedLinear an
    activation scale: the power of two that puts `headroom` times the
    largest input magnitude seen (over every layer's linear of the same
    role) at or below the format's largest finite value (inputs beyond it saturate at run time, by the clamp). Returns,
    by module name, the scales and the largest partial sum of the f8
    product in f8 units (sum over K of |x8| |w8|, at the calibration
    inputs): above f16's largest finite value, f16 partials would overflow
    where f32 partials do not (the compiler's --check reports it). With
    `attention` (an installed F8Attention), its operands are calibrated in
    the same run, their scales under "attention"."""
    linears = {name: m for name, m in model.named_modules() if isinstance(m, QuantizedLinear)}
    for m in linears.values():
        m.activation_scale = None
        m.calibrated_magnitude = 0.0
        m.calibrated_partial = 0.0
    if attention is not None:
        attention.magnitudes = {role: 0.0 for role in F8Attention.ROLES}
    with torch.no_grad():
        model(*inputs)
    # One scale per role across repeated layers (layers.N. -> layers.*.):
    # the layers stay alike, so the compiler keeps them one repeated body
    # (a scale per layer would make each layer's matmuls differ).
    role = lambda name: re.sub(r"\.layers\.\d+\.", ".layers.*.", name)
    largest_by_role: Dict[str, float] = {}
    for name, m in linears.items():
        largest_by_role[role(name)] = max(largest_by_role.get(role(name), 0.0),
                                          m.calibrated_magnitude)
    scales = {}
    for name, m in linears.items():
        m.activation_scale = power_of_two_scale(largest_by_role[role(name)] * headroom, m.largest)
        scales[name] = {"activationScale": m.activation_scale, "weightScale": m.scale,
                        "calibratedMagnitude": m.calibrated_magnitude,
                        "largestPartialSumF8Units": m.calibrated_partial / m.activation_scale}
        m.calibrated_magnitude = None
        m.calibrated_partial = None
    if attention is not None:
        scales["attention"] = attention.calibrated(headroom)
    return scales


def quantize_linears(model: torch.nn.Module, weights: str) -> int:
    """Replaces every torch.nn.Linear in `model` by a QuantizedLinear in the
    f8 format `weights` (a key of F8_WEIGHTS); returns how many. Other
    parameters (the patch embedding's convolution, layer norms, biases, and
    torch.nn.MultiheadAttention's projections, which it reads as tensors:
    the attention-pooling head's) keep their type."""
    if weights not in F8_WEIGHTS:
        raise SystemExit(f"ipu_export: weights '{weights}' is not one of {', '.join(F8_WEIGHTS)}")
    f8_dtype, largest = F8_WEIGHTS[weights]
    replaced = 0
    for module in list(model.modules()):
        if isinstance(module, torch.nn.MultiheadAttention):
            continue
        for name, child in list(module.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(module, name, QuantizedLinear(child, f8_dtype, largest))
                replaced += 1
    return replaced


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    """`tensor` as numpy, f8 through ml_dtypes' types of the same bits."""
    tensor = tensor.detach()
    if tensor.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz):
        import ml_dtypes
        target = ml_dtypes.float8_e4m3fn if tensor.dtype == torch.float8_e4m3fn \
            else ml_dtypes.float8_e4m3fnuz
        return tensor.view(torch.uint8).numpy().view(target)
    return tensor.numpy()


def _make_buffers_persistent(model: torch.nn.Module) -> None:
    # torch-mlir 20261001 cannot lift buffers registered with persistent=False
    # (llvm/torch-mlir#4744; SigLIP's position_ids is one): as persistent
    # buffers torch.export lists them in the state dict, and the fx importer
    # freezes them like any other.
    for module in model.modules():
        module._non_persistent_buffers_set.clear()


def _flatten(value) -> List[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if hasattr(value, "to_tuple"):  # transformers' ModelOutput
        value = value.to_tuple()
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _flatten(v)]
    raise TypeError(f"ipu_export: cannot flatten an output of type {type(value)}")


class _Flat(torch.nn.Module):
    """The model returning a flat tuple of tensors, as the exported function
    returns its results."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, *inputs):
        return tuple(_flatten(self.model(*inputs)))


AUTO = "auto"


def batch_dim_of(model: torch.nn.Module, shape: Sequence[int]) -> Optional[int]:
    """The dimension along which an input of `shape` holds a batch, as
    PyTorch's modules take it: the leading one of pixels ([B, C, H, W], rank
    4 or more) and of a sequence ([B, S, D], rank 3), except that a sequence
    fed to torch.nn's attention built sequence-first (the first
    torch.nn.MultiheadAttention in the model has batch_first=False, as
    nn.TransformerEncoder's layers do by default) is [S, B, D]: 1. A matrix
    or a vector is left unmarked (None): its rows may be one sequence's
    tokens, not images. --batch-dim says otherwise."""
    if len(shape) >= 4:
        return 0
    if len(shape) == 3:
        for module in model.modules():
            if isinstance(module, torch.nn.MultiheadAttention):
                return 0 if module.batch_first else 1
        return 0
    return None


def _mark_batch_dim(module, dim: int) -> None:
    """Marks the exported function's first argument with
    `ipu_tile.batch_dim = dim`, keeping its other argument attributes."""
    from torch_mlir import ir

    with module.context:
        func = next(op.operation for op in module.body.operations
                    if op.operation.name == "func.func")
        count = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
        existing = ir.ArrayAttr(func.attributes["arg_attrs"]) \
            if "arg_attrs" in func.attributes else None
        dicts = [existing[i] if existing is not None else ir.DictAttr.get({}) for i in range(count)]
        first = ir.DictAttr(dicts[0])
        entries = {first[i].name: first[i].attr for i in range(len(first))}
        entries["ipu_tile.batch_dim"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), dim)
        dicts[0] = ir.DictAttr.get(entries)
        func.attributes["arg_attrs"] = ir.ArrayAttr.get(dicts)


def export(model: torch.nn.Module, shapes: Sequence[Sequence[int]], dtype: str,
           directory: str, seed: int = 0, weights: str = None,
           activations: bool = False, calibration_inputs: int = 2,
           batch_dim=AUTO, attention: bool = False) -> Exported:
    """Exports `model` on random inputs of `shapes` in `dtype` (f32 or f16)
    into `directory`; with `weights` (f8E4M3FN or f8E4M3FNUZ), every linear
    layer's weight quantised to it first (quantize_linears). With
    `activations`, every quantised linear's input is quantised to the same
    format, with one power-of-two scale per linear calibrated on
    `calibration_inputs` random inputs drawn apart from the exported ones
    (calibrate_activations); the scales go to DIR/scales.json. `batch_dim` is
    the first input's batch dimension to mark (an int), None for none, or
    AUTO for batch_dim_of's; Exported.batch_dim says which was marked.
    With `attention` (it needs `activations`), eager attention's matmuls
    take f8 operands too (F8Attention), calibrated with the linears."""
    from torch_mlir import fx

    if dtype not in DTYPES:
        raise SystemExit(f"ipu_export: dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    torch_dtype = DTYPES[dtype]
    if batch_dim == AUTO:
        batch_dim = batch_dim_of(model, shapes[0]) if shapes else None
    if batch_dim is not None and not (shapes and 0 <= batch_dim < len(shapes[0])):
        raise SystemExit(f"ipu_export: --batch-dim {batch_dim} is not a dimension of the "
                         f"first input's shape {list(shapes[0]) if shapes else []}")
    _make_buffers_persistent(model)
    # The model in f32, before any rounding to dtype or f8: how far a
    # quantised model lies from it is what users choose a mode by.
    unquantised = _Flat(copy.deepcopy(model).float()).eval() if weights else None
    quantisation = None
    model = model.to(torch_dtype)
    if activations and not weights:
        raise SystemExit("ipu_export: f8 activations need f8 weights (--weights)")
    if attention and not activations:
        raise SystemExit("ipu_export: f8 attention needs f8 activations (--activations f8)")
    if weights:
        quantize_linears(model, weights)
    layer_norms = F16LayerNorms() if activations else None
    if layer_norms is not None:
        layer_norms.install(model)
    f8_attention = None
    if attention:
        f8_attention = F8Attention(*F8_WEIGHTS[weights])
        if f8_attention.install(model) == 0:
            raise SystemExit("ipu_export: f8 attention found no eager_attention_forward in "
                             "the model's modelling modules")
    try:
        model = _Flat(model).eval()
        scales = None
        if activations:
            calibration = torch.Generator().manual_seed(seed + 1_000_003)
            batches = [[torch.randn(*shape, generator=calibration).to(torch_dtype)
                        for shape in shapes] for _ in range(calibration_inputs)]
            scales = calibrate_activations(
                model, [torch.cat(list(group)) for group in zip(*batches)],
                attention=f8_attention)
        generator = torch.Generator().manual_seed(seed)
        inputs = [torch.randn(*shape, generator=generator).to(torch_dtype) for shape in shapes]
        with torch.no_grad():
            outputs = model(*inputs)
            if f8_attention is not None and f8_attention.calls == 0:
                raise SystemExit("ipu_export: f8 attention replaces eager attention, which the "
                                 "model did not run: export with "
                                 "--set _attn_implementation=eager")
            module = fx.export_and_import(model, *inputs, output_type="linalg-on-tensors",
                                          func_name="main")
    finally:
        if f8_attention is not None:
            f8_attention.restore()
        if layer_norms is not None:
            layer_norms.restore()
    if batch_dim is not None:
        _mark_batch_dim(module, batch_dim)
    for sub in ("weights", "inputs", "expected"):
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
    if unquantised is not None:
        # Rounded to the results' own type, as ipu-run --expect reads them.
        os.makedirs(os.path.join(directory, "expected-f32"), exist_ok=True)
        with torch.no_grad():
            reference = unquantised(*[t.float() for t in inputs])
        for i, tensor in enumerate(reference):
            np.save(os.path.join(directory, "expected-f32", f"result{i}.npy"),
                    tensor.to(outputs[i].dtype).numpy())
        # PyTorch's own quantised model against the f32 one, over all
        # results: the yardstick for the device's distance from f32.
        quantised = torch.cat([t.float().flatten() for t in outputs]).double()
        exact = torch.cat([t.float().flatten() for t in reference]).double()
        quantisation = {
            "maximumAbsoluteError": (quantised - exact).abs().max().item(),
            "cosineSimilarity": (quantised @ exact / (quantised.norm() * exact.norm())).item()}
    if scales is not None:
        import json
        with open(os.path.join(directory, "scales.json"), "w") as f:
            json.dump({"format": weights, "headroom": 2.0, "calibrationInputs": calibration_inputs,
                       "linears": scales}, f, indent=1, sort_keys=True)
    text = module.operation.get_asm(print_generic_op_form=True)
    with open(os.path.join(directory, "model.mlir"), "w") as f:
        f.write(text)

    def numpy_of(tensor: torch.Tensor) -> np.ndarray:
        return tensor.detach().to(torch_dtype).numpy()

    result = Exported(directory, [numpy_of(t) for t in inputs],
                      [numpy_of(t) for t in outputs], {}, len(text), quantisation,
                      batch_dim)
    for i, array in enumerate(result.inputs):
        np.save(os.path.join(directory, "inputs", f"arg{i}.npy"), array)
    for i, array in enumerate(result.outputs):
        np.save(os.path.join(directory, "expected", f"result{i}.npy"), array)
    for name, tensor in model.model.state_dict().items():
        is_f8 = tensor.dtype in (torch.float8_e4m3fn, torch.float8_e4m3fnuz)
        result.weights[name] = numpy_of(tensor) if tensor.is_floating_point() and not is_f8 \
            else _numpy(tensor)
        np.save(os.path.join(directory, "weights", f"{name}.npy"), result.weights[name])
    return result
