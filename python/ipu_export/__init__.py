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
           directory: str, seed: int = 0) -> Exported:
    """Exports `model` on random inputs of `shapes` in `dtype` (f32 or f16)
    into `directory`."""
    from torch_mlir import fx

    if dtype not in DTYPES:
        raise SystemExit(f"ipu_export: dtype '{dtype}' is not one of {', '.join(DTYPES)}")
    torch_dtype = DTYPES[dtype]
    _make_buffers_persistent(model)
    model = _Flat(model.to(torch_dtype)).eval()
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
        result.weights[name] = numpy_of(tensor) if tensor.is_floating_point() \
            else tensor.detach().numpy()
        np.save(os.path.join(directory, "weights", f"{name}.npy"), result.weights[name])
    return result
