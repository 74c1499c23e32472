#!/usr/bin/env bash
# bench=sensitivity: whole programs compiled, packaged and simulated with
# each assumed cost constant of the TargetModel at 0.5x and 2x (--all: every
# constant; --constants A,B: those); see bench/sensitivity-bench.cpp. The
# programs, at full size (scripts/siglip-workload.py, as torch-mlir exports
# them):
#   mlpAny        the SigLIP MLP: fc1, the tanh GELU, fc2, biases, f16
#                 casts (--ipu-compile partials=any)
#   mlpF8         the MLP with f8 weights and the activations cast to f8
#                 (f32 partials, the exporters' default)
#   attentionAny  attention: q, k, v, the scores, softmax, the heads'
#                 merge, the output projection (partials=any)
#   blockF8       the encoder block: layer norms, attention, MLP, residuals;
#                 f8 weights (f32 partials: with partials=any and every
#                 weight stored once its compile spends over 4 minutes in
#                 the planner's storage search); blockF8Attention its
#                 attention half (layer norm 1 to the first residual), by
#                 the cycles of its ops (ipu-run --ops)
#   towerLayerF8  so400m's vision tower with one layer (384 px: the patch
#                 embedding, the layer with eager attention, the pooling
#                 head) exported by python -m ipu_export with f8 linear
#                 weights (needs .venv; left out without it)
# Every program keeps each weight once (max-weight-replicas=1), as the
# headline and a stack of layers do.
# Options: --all, --constants A,B, --jobs N (2: run it under the build lock),
# --job-seconds S.
set -euo pipefail
bin=${BENCH_BIN:?run through bench/run}
root=${BENCH_ROOT:?run through bench/run}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() { # file, then siglip-workload.py's options
  local file=$1
  shift
  python3 "$root/scripts/siglip-workload.py" "$@" -o "$work/$file"
}
generate mlp-f16.mlir --part mlp --weights f16
generate mlp-f8.mlir --part mlp --weights f8E4M3FN
generate attention-f16.mlir --part attention --weights f16
generate block-f8.mlir --part block --weights f8E4M3FN
# The block's attention half, its own figure: from layer norm 1 to the
# residual after attention (the generator's comments mark the halves).
first=$(grep -n '// block 0: layer norm 1, attention' "$work/block-f8.mlir" | cut -d: -f1)
second=$(grep -n '// block 0: layer norm$' "$work/block-f8.mlir" | cut -d: -f1)
# Every weight stored once (max-weight-replicas=1), as the headline and a
# stack of layers keep them.
once=max-weight-replicas=1
programs=(--program "mlpAny:partials=any $once:$work/mlp-f16.mlir"
          --program "mlpF8:$once:$work/mlp-f8.mlir"
          --program "attentionAny:partials=any $once:$work/attention-f16.mlir"
          --program "blockF8:$once:$work/block-f8.mlir"
          --part "blockF8Attention:blockF8:$first-$((second - 1))")
python="$root/.venv/bin/python"
if [ -x "$python" ] &&
   PYTHONPATH="$root/python" "$python" -m ipu_export siglip-vision \
     --set num_hidden_layers=1 --set _attn_implementation=eager \
     --shape 1,3,384,384 --dtype f16 --weights f8E4M3FN -o "$work/tower" > "$work/export.log" 2>&1; then
  programs+=(--program "towerLayerF8:$once:$work/tower/model.mlir")
else
  echo "bench=sensitivity case=program-error program=towerLayerF8 error=\"no .venv, or the export failed: $(tail -n 1 "$work/export.log" 2> /dev/null | cut -c1-200)\""
fi
# By default the assumed constants these programs can move: a constant of
# an op none of them holds is named on a not-varied line, not compiled
# 4 x 5 times to show it moves nothing (--constants or --all vary what they
# name).
except=() reasons=()
case " $* " in
  *" --constants "*|*" --all "*) ;;
  *)
    sources=("$work"/*.mlir)
    [ -f "$work/tower/model.mlir" ] && sources+=("$work/tower/model.mlir")
    if ! grep -q 'math\.fma' "${sources[@]}"; then
      except+=(ewFmaInstructionsF16 ewFmaInstructionsF32)
      reasons+=("no program holds a math.fma (exporters write a multiply and an add)")
    fi
    if ! grep -q 'math\.erf' "${sources[@]}"; then
      except+=(geluErfCyclesPerElement)
      reasons+=("no program holds an erf GELU (SigLIP's is the tanh form)")
    fi
    # A loop is a repeated layer's, and no program here is compiled with
    # repeat-layers=true.
    except+=(loopIterationCycles)
    reasons+=("no program runs a loop (none is compiled with repeat-layers=true)") ;;
esac
if [ ${#except[@]} -gt 0 ]; then
  joined_reasons=$(IFS=';'; echo "${reasons[*]}" | sed 's/;/; /g')
  programs+=(--except "$(IFS=,; echo "${except[*]}"):$joined_reasons")
fi
"$bin/sensitivity-bench" "${programs[@]}" "$@"
