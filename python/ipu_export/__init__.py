"""Exports PyTorch models to linalg on tensors for the IPU compiler.

The model goes through torch.export and torch-mlir's fx importer, and what
the compiler and its checks need is written to one directory:

  model.mlir             the module, in MLIR's generic op form: the form
                         that survives the version skew between torch-mlir's
                         MLIR and the compiler's (LLVM 22); weights stay
                         inside it as dense_resource constants, which the
                         compiler carries into the package
  inputs/arg<i>.npy      the example inputs, in the shapes the function
                         takes: what `ipu-run --inputs DIR/inputs` reads
  expected/result<i>.npy PyTorch's own eager outputs for them: what
                         `ipu-run --expect DIR/expected` compares with
  weights/<name>.npy     the model's parameters and buffers, by state-dict
                         name

Only a Python bridge: the compiler, the runtime and the checks are C++.
"""

import dataclasses
import importlib.util
import os
from typing import Callable, Dict, List, Sequence

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
    quantised model computes."""

    def __init__(self, linear: torch.nn.Linear, f8_dtype: torch.dtype, largest: float):
        super().__init__()
        weight = linear.weight.detach().float()
        magnitude = weight.abs().max().item()
        exponent = int(np.ceil(np.log2(magnitude / largest))) if magnitude > 0 else 0
        self.scale = float(2.0 ** exponent)
        self.weight8 = torch.nn.Parameter((weight / self.scale).to(f8_dtype), requires_grad=False)
        self.bias = linear.bias

    def forward(self, x):
        weight = self.weight8.to(x.dtype) * self.scale
        return torch.nn.functional.linear(x, weight, self.bias)


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


def export(model: torch.nn.Module, shapes: Sequence[Sequence[int]], dtype: str,
           directory: str, seed: int = 0, weights: str = None) -> Exported:
    """Exports `model` on random inputs of `shapes` in `dtype` (f32 or f16)
    into `directory`; with `weights` (f8E4M3FN or f8E4M3FNUZ), every linear
    layer's weight quantised to it first (quantize_linears)."""
    from torch_mlir import fx

    if dtype not in DTYPES:
        raise SystemExit(f"ipu_export: dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    torch_dtype = DTYPES[dtype]
    _make_buffers_persistent(model)
    model = model.to(torch_dtype)
    if weights:
        quantize_linears(model, weights)
    model = _Flat(model).eval()
    generator = torch.Generator().manual_seed(seed)
    inputs = [torch.randn(*shape, generator=generator).to(torch_dtype) for shape in shapes]
    with torch.no_grad():
        outputs = model(*inputs)
        module = fx.export_and_import(model, *inputs, output_type="linalg-on-tensors",
                                      func_name="main")
    for sub in ("weights", "inputs", "expected"):
        os.makedirs(os.path.join(directory, sub), exist_ok=True)
    text = module.operation.get_asm(print_generic_op_form=True)
    with open(os.path.join(directory, "model.mlir"), "w") as f:
        f.write(text)

    def numpy_of(tensor: torch.Tensor) -> np.ndarray:
        return tensor.detach().to(torch_dtype).numpy()

    result = Exported(directory, [numpy_of(t) for t in inputs],
                      [numpy_of(t) for t in outputs], {}, len(text))
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
