"""python -m ipu_export MODEL --shape N,C,H,W [--shape ...] [--dtype f32|f16]
                        [--set field=value ...] [--seed N]
                        [--weights f8E4M3FN|f8E4M3FNUZ [--activations f8 [--attention f8]]]
                        [--batch-dim N|none|auto] -o DIR

MODEL is a built-in model (siglip-vision: transformers' SiglipVisionModel,
so400m-patch14-384 unless --set says otherwise; siglip-encoder-layer: its
first encoder layer, on hidden states [N, tokens, width]) or
file.py:factory. --weights quantises every linear layer's weight to f8 with
one power-of-two scale per tensor (the expected outputs are the quantised
model's). --batch-dim marks the dimension of the first input that holds
the batch, which ipu-run counts a batch's images by (auto: the leading one
of pixels and of a sequence, 1 for a sequence into torch.nn attention
built sequence-first, none for a matrix). Writes
DIR/model.mlir (generic op form), the inputs, PyTorch's eager outputs and
the weights as .npy files (see ipu_export's docstring).
"""

import argparse
import sys
import time

from . import AUTO, export, load_model


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ipu_export", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--shape", action="append", required=True,
                        help="an input's shape, comma-separated; once per input")
    parser.add_argument("--dtype", default="f32", help="f32 or f16")
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="a model config field (built-in models) or factory argument")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weights", default=None,
                        help="f8E4M3FN or f8E4M3FNUZ: linear weights in f8, one "
                             "power-of-two scale per tensor")
    parser.add_argument("--activations", default=None,
                        help="f8: also quantise every f8 linear's input to the "
                             "weights' format, with a power-of-two scale per "
                             "linear calibrated at export (written to "
                             "DIR/scales.json): native f8 matmuls")
    parser.add_argument("--attention", default=None,
                        help="f8: eager attention's matmuls take f8 operands too "
                             "(query, key and value with calibrated scales, the "
                             "probabilities with 2^-8); needs --activations f8")
    parser.add_argument("--batch-dim", default="auto", metavar="N|none|auto",
                        help="the first input's batch dimension, marked for ipu-run's "
                             "image count (auto: see ipu_export.batch_dim_of)")
    parser.add_argument("-o", "--output", required=True, help="directory to write")
    args = parser.parse_args(argv)

    overrides = {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep:
            parser.error(f"--set '{item}' is not FIELD=VALUE")
        overrides[key] = value
    try:
        shapes = [[int(d) for d in text.split(",")] for text in args.shape]
    except ValueError:
        parser.error(f"--shape takes comma-separated integers, got {args.shape}")

    if args.batch_dim in ("auto", "none"):
        batch_dim = AUTO if args.batch_dim == "auto" else None
    else:
        try:
            batch_dim = int(args.batch_dim)
        except ValueError:
            parser.error(f"--batch-dim takes a dimension, none or auto, got '{args.batch_dim}'")

    start = time.time()
    model = load_model(args.model, overrides, args.seed)
    if args.activations not in (None, "f8"):
        parser.error(f"--activations takes f8, got '{args.activations}'")
    if args.attention not in (None, "f8"):
        parser.error(f"--attention takes f8, got '{args.attention}'")
    exported = export(model, shapes, args.dtype, args.output, args.seed, args.weights,
                      activations=args.activations == "f8", batch_dim=batch_dim,
                      attention=args.attention == "f8")
    print(f"export=ipu_export model={args.model} dtype={args.dtype} "
          f"inputs={len(exported.inputs)} outputs={len(exported.outputs)} "
          f"weights={len(exported.weights)} mlirBytes={exported.mlir_bytes} "
          f"seconds={time.time() - start:.1f} directory={args.output} "
          f"linearWeights={args.weights or args.dtype} "
          f"linearActivations={args.weights if args.activations else args.dtype}"
          f" attentionOperands={args.weights if args.attention else args.dtype}"
          + ("" if exported.quantisation is None else
             f" quantisedVsF32MaximumAbsoluteError={exported.quantisation['maximumAbsoluteError']:.6g}"
             f" quantisedVsF32CosineSimilarity={exported.quantisation['cosineSimilarity']:.6f}")
          + f" batchDim={'none' if exported.batch_dim is None else exported.batch_dim}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
