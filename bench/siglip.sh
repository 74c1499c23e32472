#!/usr/bin/env bash
# bench=siglip: the SigLIP encoder's parts at full size (t729, d1152, 16
# heads of 72, MLP 4304) as torch-mlir exports them
# (scripts/siglip-workload.py), compiled for ipu21, packaged, simulated and
# checked; rows for the MLP, attention, the block's MLP half
# (layer norm, MLP, residual) and the whole encoder block, with f32
# partials (the exporters' default)
# and with f16 partials allowed (--ipu-compile="partials=any"), and with f8
# weights. Each of those first with every weight stored once
# (max-weight-replicas=1, weightsStored=once: the layout a stack of layers
# can keep), the headline, then as the planner likes it best, each weight
# replicated over its plan's row blocks and loaded before the run
# (weightsStored=replicated, the case name ending -replicated). Each row:
# compile seconds in total and per pass (compile_<Pass>Seconds), simulated
# cycles and efficiency, exchange cycles and the worst and median phase
# horizon over its lower bound (and less its latency over the busiest
# tile's events), the weights' copies (weightReplicasMax for the matrices,
# rowWeightReplicasMax for biases and scales), the bytes the tiles hold of
# them and what loading them before the run costs (weightLoadLinkBytes over
# the host link, each byte once, and weightLoadCycles: the link at the
# user's measured rate plus the exchange's fan-out to the copies; the run's
# cycles leave it out), the memory peaks against their bounds, the planner's
# estimate against the simulated cycles, simulator seconds, the check, and
# the user's current stack beside ours where its log gives it, on rows whose
# weights are stored once as theirs are
# (../shared/seeds: the MLP's measured 225,672 cycles as userStackCycles;
# attention's 406,211 is their planner's estimate, userStackPlannerCycles). The last row
# is a stack of four encoder blocks (f16 partials allowed), with its
# cycles per block, unrolled and as one body run once per block
# (repeat-layers=true, with its IR and reserved code bytes beside), then the MLP on a batch of 8 images (serial splits),
# with its cycles per image. `--part export` (not in the default set: it
# needs .venv) exports one so400m encoder layer from transformers live
# (python -m ipu_export siglip-encoder-layer, f16, [1, 729, 1152]),
# compiles it, runs it on PyTorch's input against PyTorch's output
# (--expect) and op by op (--check), and gives the generated block's cycles
# beside it: with SDPA's attention (f32 and f16 partials) and with
# transformers' eager attention.
# `--part tower` (not in the default set: it needs .venv) exports the whole
# so400m vision tower (384 px, --layers N of its 27, the attention-pooling
# head) with f8 linear weights (ipu_export --weights f8E4M3FN), with SDPA's
# and with eager attention, compiles its layers as one body, and runs it
# against PyTorch's quantised model and op by op: compile and simulate
# seconds, cycles an image in all and per layer (the loop's own count over
# the images a run computes; cyclesPerRun and the compute, exchange and
# host cycles are the run's), exchange cycles, host cycles (0: every
# weight is resident, streamed before the run), images per second at the
# target's clock, memory peaks against their bounds, the IR's bytes with
# and without the data it carries.
# imagesPerSecond counts each image's input and results over the host link
# (the report's batch line) at the user's measured C600 rate (3.91 GB/s),
# imagesPerSecondPcieBound at PCIe Gen4 x16's 32 GB/s (streamed weights
# too); imagesPerSecondDeviceOnly leaves the image's link out.
# `--part tower-batch` runs the same tower (eager attention, f8 weights
# resident) on batches of --batches "1 4 8" images, exported at that batch
# and run one image after another; then the native f8 tower (weights and
# activations f8, partials any; --together-weights "f8E4M3FN+act
# f8E4M3FN+act+attn" by default, +attn for attention's operands in f8 and
# its softmax's exponentials in f16) on batches of
# --together "2" images computed at once (images=together: the linears'
# rows are every image's).
#   bench/run siglip [--part mlp|attention|ln-mlp|block|stack|batch|export|tower|tower-batch]
#                    [--blocks N] [--batch N] [--layers N] [--batches "N ..."] [--together "N ..."]
#                    [--together-weights "WEIGHTS ..."]
#                    [--towers "WEIGHTS:ATTENTION[:PARTIALS]:MODE+MODE ..."] (--part tower's
#                    configurations; all by default)
set -euo pipefail
bin=${BENCH_BIN:?run through bench/run}
root=${BENCH_ROOT:?run through bench/run}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
seconds() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.3f", e - s }'; }
value() { grep -v "^batch " "$2" | grep -Eo "(^| )$1=[^ ]+" | tail -n 1 | sed 's/.*=//'; }

# userStackCycles holds only the user's hardware measurements (the seed
# run of the MLP, f8); userStackPlannerCycles their planner's estimate
# (attention's "modelled final", machine-model.md).
theirs() { # part
  case "$1" in
    mlp) echo "userStackCycles=225672 userStackPlannerCycles=none" ;;
    attention) echo "userStackCycles=none userStackPlannerCycles=406211" ;;
    *) echo "userStackCycles=none userStackPlannerCycles=none" ;;
  esac
}

run_part() { # part partials weights [blocks] [batch] [repeat] [once|replicated]
  local part=$1 partials=$2 weights=$3 blocks=${4:-1} batch=${5:-1} repeat=${6:-} stored=${7:-}
  local name src lowered package log report
  local generate=(python3 "$root/scripts/siglip-workload.py" --part "$part" --weights "$weights" --blocks "$blocks" --batch "$batch")
  name=$("${generate[@]}" --name)${partials:+-p$partials}${repeat:+-repeat}
  [ "$stored" = replicated ] && name+=-replicated
  src="$work/$name.mlir" lowered="$work/$name.ir" package="$work/$name.ipuexe"
  log="$work/$name.log" report="$work/$name.report"
  "${generate[@]}" -o "$src"
  local t0 t1 t2 t3
  t0=$(now)
  local once=""
  [ "$stored" = once ] && once=" max-weight-replicas=1"
  if ! "$bin/ipu-opt" "$src" --ipu-compile="target=ipu21${partials:+ partials=$partials}${repeat:+ repeat-layers=true}$once" \
      --mlir-timing -o "$lowered" 2> "$log"; then
    echo "bench=siglip case=$name maxWeightReplicas=$([ -n "$once" ] && echo 1 || echo any) status=compile-error error=\"$(grep -m1 error: "$log" | sed 's/.*error: //')\""
    return 0
  fi
  t1=$(now)
  "$bin/ipu-translate" --ipu-to-package "$lowered" -o "$package"
  t2=$(now)
  "$bin/ipu-run" "$package" --check --quiet > "$report" 2>&1 || true
  t3=$(now)
  # Per pass, from MLIR's timing report ("  0.0123 ( 12.3%)  IPUPlanGemm").
  local passes
  passes=$(awk '/^ +[0-9.]+ +\( *[0-9.]+%\) +IPU[A-Za-z]+$/ { printf " compile%sSeconds=%.3f", substr($NF, 4), $1 }' "$log")
  # Per phase, from ipu-schedule-exchange's remarks: the horizon over the
  # lower bound (busiest tile's events + route latency and receive tails,
  # timedLowerBound), and the issue's measure, the horizon less what the
  # bound adds to the busiest tile's events, over those events; the worst
  # and the median of each.
  local worst
  worst=$({ grep -Eo 'lowerBound=[0-9]+ endpointEvents=[0-9]+ latency=[0-9]+ horizon=[0-9]+' "$log" || true; } |
    awk -F'[ =]' '
      function median(a, n,   i, j, t) {
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n == 0 ? 1 : (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2)
      }
      BEGIN { best = 1; bestE = 1 }
      { n++; r = ($2 ? $8 / $2 : 1); e = ($4 ? ($8 - $6) / $4 : 1); ratio[n] = r; over[n] = e
        if (r >= best) { best = r; b = $2; h = $8 }
        if (e > bestE) bestE = e }
      END { printf "exchangePhases=%d worstHorizon=%d worstBound=%d horizonOverBound=%.3f medianHorizonOverBound=%.3f worstHorizonLessLatencyOverEndpoint=%.3f medianHorizonLessLatencyOverEndpoint=%.3f", n, h, b, best, median(ratio, n), bestE, median(over, n) }')
  local cycles planned replicas
  cycles=$(value cycles "$report")
  planned=$(value plannedCycles "$report")
  replicas=$(value weightReplicasMax "$report" || true)
  local storedAs=unknown
  case "$replicas" in
    0|1) storedAs=once ;;
    [0-9]*) storedAs=replicated ;;
  esac
  # The user's figures stand beside a plan that stores its weights once, as
  # theirs does; never beside one that replicates them.
  local user="userStackCycles=none userStackPlannerCycles=none"
  if [ "$storedAs" = once ]; then
    user=$(theirs "$part")
    local userCycles=${user#userStackCycles=}
    userCycles=${userCycles%% *}
    [ "$userCycles" = none ] || user+=" cyclesOverUserStack=$(awk -v c="$cycles" -v u="$userCycles" 'BEGIN { printf "%.4f", c / u }')"
  fi
  local serial
  serial=$({ grep -Eo 'chose plan [^:]* of [0-9]+ matching' "$log" || true; } |
    awk '{ s = 1; if (match($0, /serial=[0-9]+/)) s = substr($0, RSTART + 7, RLENGTH - 7); print s }' | paste -sd'+')
  echo "bench=siglip case=$name part=$part blocks=$blocks batch=$batch weights=$weights partials=${partials:-f32}" \
       "repeatLayers=$([ -n "$repeat" ] && echo true || echo false) serialSplits=$serial" \
       "irBytes=$(wc -c < "$lowered") reservedStandardBytes=$(value reservedStandardBytes "$report")" \
       "reservedExchangeCodeBytes=$(value reservedExchangeCodeBytes "$report") reservedVertexStateBytes=$(value reservedVertexStateBytes "$report")" \
       "compileSeconds=$(seconds "$t0" "$t1")$passes packageSeconds=$(seconds "$t1" "$t2")" \
       "cycles=$cycles efficiencyOwnPeakPercent=$(value efficiencyOwnPeakPercent "$report") efficiencyAgainstF16PeakPercent=$(value efficiencyAgainstF16PeakPercent "$report")" \
       "computeCycles=$(value computeCycles "$report") exchangeCycles=$(value exchangeCycles "$report")" \
       "syncCycles=$(value syncCycles "$report") $worst" \
       "maxWeightReplicas=$([ -n "$once" ] && echo 1 || echo any) weightsStored=$storedAs" \
       "weightReplicasMax=$replicas rowWeightReplicasMax=$(value rowWeightReplicasMax "$report")" \
       "weightBytesResident=$(value weightBytesResident "$report") weightLoadLinkBytes=$(value weightLoadLinkBytes "$report")" \
       "weightLoadLinkCycles=$(value weightLoadLinkCycles "$report") weightLoadFanOutCycles=$(value weightLoadFanOutCycles "$report")" \
       "weightLoadCycles=$(value weightLoadCycles "$report")" \
       "memoryPeakStandardBytes=$(value memoryPeakStandardBytes "$report") memoryBoundStandardBytes=$(value memoryBoundStandardBytes "$report")" \
       "memoryPeakInterleavedBytes=$(value memoryPeakInterleavedBytes "$report") memoryBoundInterleavedBytes=$(value memoryBoundInterleavedBytes "$report")" \
       "plannedCycles=$planned planError=$(awk -v c="$cycles" -v p="$planned" 'BEGIN { printf "%.4f", (c ? (p - c) / c : 0) }')" \
       "cyclesPerBlock=$(awk -v c="$cycles" -v b="$blocks" 'BEGIN { printf "%d", (c ? c / b : 0) }')" \
       "cyclesPerImage=$(awk -v c="$cycles" -v b="$batch" 'BEGIN { printf "%d", (c ? c / b : 0) }')" \
       "simulateSeconds=$(seconds "$t2" "$t3") numericalTest=$(value numericalTest "$report" || echo FAIL)" \
       "$user"
}

# Packages $work/NAME.ir and runs it on DIR's inputs against DIR's expected
# outputs (--expect) and op by op (--check) into REPORT; prints how long
# each took.
package_and_check() { # name dir report
  local t0 t1 t2
  t0=$(now)
  "$bin/ipu-translate" --ipu-to-package "$work/$1.ir" -o "$work/$1.ipuexe"
  t1=$(now)
  # One image runs under ipu-run's default limits (the 27-layer tower asks
  # for about 9.4e10 of its 6e11 work units); a batch of N asks for N times
  # as much, and a batch of 8 simulates for about 500 s.
  local limits=()
  [ "${images:-1}" = 1 ] || limits=(--max-work $((images * 300000000000)) --time-limit $((images * 300)))
  "$bin/ipu-run" "$work/$1.ipuexe" --inputs "$2/inputs" --expect "$2/expected" \
    --check --checkpoints 4096 --quiet "${limits[@]}" > "$3" 2>&1 || true
  t2=$(now)
  echo "packageSeconds=$(seconds "$t0" "$t1") simulateSeconds=$(seconds "$t1" "$t2")"
}

run_export() { # partials [attention]
  local partials=$1 attention=${2:-sdpa}
  local name=siglip-export-layer-f16-t729-d1152${1:+-p$1}
  [ "$attention" = sdpa ] || name+=-$attention
  local dir="$work/export-$attention" log="$work/$name.log" report="$work/$name.report"
  local python="$root/.venv/bin/python"
  [ -x "$python" ] || { echo "bench=siglip case=$name status=no-venv"; return 0; }
  local t0 t1 t2
  t0=$(now)
  if [ ! -f "$dir/model.mlir" ]; then
    PYTHONPATH="$root/python" "$python" -m ipu_export siglip-encoder-layer \
      --set num_hidden_layers=1 --set _attn_implementation="$attention" \
      --shape 1,729,1152 --dtype f16 -o "$dir" > "$work/export.log" 2>&1
  fi
  t1=$(now)
  if ! "$bin/ipu-opt" "$dir/model.mlir" --ipu-compile="target=ipu21${partials:+ partials=$partials}" \
      -o "$work/$name.ir" 2> "$log"; then
    echo "bench=siglip case=$name status=compile-error error=\"$(grep -m1 error: "$log" | sed 's/.*error: //')\""
    return 0
  fi
  t2=$(now)
  local timing
  timing=$(package_and_check "$name" "$dir" "$report")
  # The generated block (scripts/siglip-workload.py) with the same options.
  local generated="$work/generated.mlir" generatedReport="$work/$name.generated"
  python3 "$root/scripts/siglip-workload.py" --part block --weights f16 -o "$generated"
  "$bin/ipu-opt" "$generated" --ipu-compile="target=ipu21${partials:+ partials=$partials}" 2> /dev/null |
    "$bin/ipu-translate" --ipu-to-package -o "$work/generated.ipuexe"
  "$bin/ipu-run" "$work/generated.ipuexe" --quiet > "$generatedReport" 2>&1 || true
  local cycles generatedCycles
  cycles=$(value cycles "$report")
  generatedCycles=$(value cycles "$generatedReport")
  echo "bench=siglip case=$name part=export partials=${partials:-f32} attention=$attention" \
       "exportSeconds=$(seconds "$t0" "$t1") compileSeconds=$(seconds "$t1" "$t2")" \
       "$timing" \
       "cycles=$cycles computeCycles=$(value computeCycles "$report") exchangeCycles=$(value exchangeCycles "$report")" \
       "generatedBlockCycles=$generatedCycles" \
       "overGenerated=$(awk -v c="$cycles" -v g="$generatedCycles" 'BEGIN { printf "%.4f", (g ? c / g : 0) }')" \
       "memoryPeakStandardBytes=$(value memoryPeakStandardBytes "$report") memoryBoundStandardBytes=$(value memoryBoundStandardBytes "$report")" \
       "expectMaximumAbsoluteError=$(grep '^expected=' "$report" | grep -Eo 'maximumAbsoluteError=[^ ]+' | sed 's/.*=//')" \
       "expectTest=$(grep '^expected=' "$report" | grep -Eo 'numericalTest=[A-Z]+' | sed 's/.*=//')" \
       "numericalTest=$(grep '^referencePrecision=' "$report" | grep -Eo 'numericalTest=[A-Z]+' | sed 's/.*=//')"
}

run_tower() { # layers weights attention partials modes...
  # Exported once; compiled and run once per mode: resident (every layer's
  # weights on the tiles, each stored once: max-weight-replicas=1, as a
  # stack of layers must) or streamed (each layer's from the host as it
  # starts). $images images a batch (1 unless --part tower-batch). WEIGHTS
  # f8E4M3FN+act also rounds every linear's input to f8 (ipu_export
  # --activations f8: native f8 matmuls), f8E4M3FN+act+attn attention's
  # matmul operands too (--attention f8); partials f32 or any.
  local layers=$1 weights=$2 attention=$3 partials=$4
  shift 4
  local dir="$work/tower-$layers-$weights-$attention-b$images"
  local python="$root/.venv/bin/python"
  local base=siglip-tower-so400m-384-l$layers-$weights-$attention-p$partials
  [ "$images" = 1 ] || base+=-b$images
  [ -z "$together" ] || base+=-together
  [ -x "$python" ] || { echo "bench=siglip case=$base status=no-venv"; return 0; }
  local quantise=() stored=${weights%%+*}
  [ "$stored" = f16 ] || quantise=(--weights "$stored")
  case "+$weights+" in *+act+*) quantise+=(--activations f8) ;; esac
  case "+$weights+" in *+attn+*) quantise+=(--attention f8) ;; esac
  local t0 t1 t2 t3
  t0=$(now)
  PYTHONPATH="$root/python" "$python" -m ipu_export siglip-vision \
    --set num_hidden_layers="$layers" --set _attn_implementation="$attention" \
    --shape "$images",3,384,384 --dtype f16 "${quantise[@]}" -o "$dir" > "$work/tower-export.log" 2>&1
  t1=$(now)
  local mode
  for mode in "$@"; do
    local name=$base-$mode log="$work/$base-$mode.log" report="$work/$base-$mode.report"
    local options="target=ipu21 repeat-layers=true max-weight-replicas=1 partials=$partials"
    [ "$mode" = streamed ] && options="$options stream-weights=true"
    [ -n "$together" ] && options="$options images=together"
    local head="bench=siglip case=$name part=tower layers=$layers weights=$weights attention=$attention partials=$partials weightsMode=$mode weightsStored=once batch=$images imagesMode=$([ -n "$together" ] && echo together || echo sequence)"
    t2=$(now)
    # The weights and the exchange schedules' run tables go to a data file
    # beside the IR, which keeps the program.
    options="$options data-file=$work/$name.data"
    if ! "$bin/ipu-opt" "$dir/model.mlir" --ipu-compile="$options" -o "$work/$name.ir" 2> "$log"; then
      echo "$head exportSeconds=$(seconds "$t0" "$t1") compileSeconds=$(seconds "$t2" "$(now)") status=compile-error" \
           "error=\"$(grep -m1 error: "$log" | sed 's/.*error: //' | cut -c1-300)\""
      rm -f "$work/$name.ir" "$work/$name.data"
      continue
    fi
    t3=$(now)
    local timing
    timing=$(package_and_check "$name" "$dir" "$report")
    local loopLine
    loopLine=$(grep -m1 '^loop=repeat' "$report" || true)
    # The batch's own line: every image's run, and each image's input and
    # results over the host link.
    local batchLine
    batchLine=$(grep -m1 '^batch images=' "$report" || true)
    # Per image, whether the run computes one image or the batch at once
    # (images=together): the run's cycles over the images it computes.
    local cyclesPerImage imagesPerRun perIteration
    cyclesPerImage=$(echo "$batchLine" | grep -Eo 'deviceCyclesPerImage=[0-9]+' | sed 's/.*=//' || true)
    [ -n "$cyclesPerImage" ] || cyclesPerImage=$(value cycles "$report")
    imagesPerRun=$(awk -v r="$(value cycles "$report")" -v i="$cyclesPerImage" 'BEGIN { printf "%d", (i ? r / i + 0.5 : 1) }')
    # A tower of one layer has no loop, so no figure per layer.
    perIteration=$(echo "$loopLine" | grep -Eo 'cyclesPerIteration=[0-9]+' | sed 's/.*=//' || true)
    echo "$head exportSeconds=$(seconds "$t0" "$t1") compileSeconds=$(seconds "$t2" "$t3")" \
         "$timing" \
         "irBytes=$(wc -c < "$work/$name.ir") dataFileBytes=$(wc -c < "$work/$name.data")" \
         "cycles=$cyclesPerImage cyclesPerRun=$(value cycles "$report") imagesPerRun=$imagesPerRun" \
         "computeCycles=$(value computeCycles "$report") exchangeCycles=$(value exchangeCycles "$report")" \
         "efficiencyOwnPeakPercent=$(value efficiencyOwnPeakPercent "$report")" \
         "hostCycles=$(value hostCycles "$report") hostBytes=$(value hostBytes "$report")" \
         "layersCycles=$(echo "$loopLine" | grep -Eo 'loopRunCycles=[0-9]+' | sed 's/.*=//')" \
         "cyclesPerLayer=$([ -z "$perIteration" ] || awk -v c="$perIteration" -v n="$imagesPerRun" 'BEGIN { printf "%d", c / n }')" \
         "imagesPerSecond=$(echo "$batchLine" | grep -Eo 'imagesPerSecond=[0-9.]+' | sed 's/.*=//')" \
         "imagesPerSecondPcieBound=$(echo "$batchLine" | grep -Eo 'imagesPerSecondPcieBound=[0-9.]+' | sed 's/.*=//')" \
         "imagesPerSecondDeviceOnly=$(echo "$batchLine" | grep -Eo 'imagesPerSecondDeviceOnly=[0-9.]+' | sed 's/.*=//')" \
         "batchCyclesWithLink=$(echo "$batchLine" | grep -Eo 'batchCyclesWithLink=[0-9]+' | sed 's/.*=//')" \
         "imageLinkCycles=$(echo "$batchLine" | grep -Eo 'imageLinkCycles=[0-9]+' | sed 's/.*=//')" \
         "imageLinkBytes=$(echo "$batchLine" | grep -Eo 'imageLinkBytes=[0-9]+' | sed 's/.*=//')" \
         "imageFanOutCycles=$(echo "$batchLine" | grep -Eo 'imageFanOutCycles=[0-9]+' | sed 's/.*=//')" \
         "memoryPeakStandardBytes=$(value memoryPeakStandardBytes "$report") memoryBoundStandardBytes=$(value memoryBoundStandardBytes "$report")" \
         "memoryPeakInterleavedBytes=$(value memoryPeakInterleavedBytes "$report") memoryBoundInterleavedBytes=$(value memoryBoundInterleavedBytes "$report")" \
         "expectMaximumAbsoluteError=$(grep '^expected=' "$report" | grep -Eo 'maximumAbsoluteError=[^ ]+' | sed 's/.*=//')" \
         "expectTest=$(grep '^expected=' "$report" | grep -Eo 'numericalTest=[A-Z]+' | sed 's/.*=//')" \
         "numericalTest=$(grep '^referencePrecision=' "$report" | grep -Eo 'numericalTest=[A-Z]+' | sed 's/.*=//')" \
         "pooledCosineSimilarityVsPyTorch=$(grep '^expect result=1 ' "$report" | grep -Eo 'cosineSimilarity=[0-9.]+' | sed 's/.*=//')" \
         "pyTorchQuantisedVsF32MaximumAbsoluteError=$(grep -Eo 'quantisedVsF32MaximumAbsoluteError=[0-9.e-]+' "$work/tower-export.log" | sed 's/.*=//')" \
         "pyTorchQuantisedVsF32CosineSimilarity=$(grep -Eo 'quantisedVsF32CosineSimilarity=[0-9.]+' "$work/tower-export.log" | sed 's/.*=//')"
    rm -f "$work/$name.ir" "$work/$name.data"
  done
  rm -rf "$dir"
}

parts=(mlp attention ln-mlp block stack batch)
images=1
batches="1 4 8"
togetherBatches="2"
togetherWeights="f8E4M3FN+act f8E4M3FN+act+attn"
together=""
stacked=4
batch=8
layers=27
# --part tower's configurations, weights:attention:modes (modes joined by +).
# WEIGHTS:ATTENTION:PARTIALS:MODES; PARTIALS may be left out (f32).
towers="f8E4M3FN:eager:f32:resident f8E4M3FN:eager:any:resident f8E4M3FN+act:eager:any:resident f8E4M3FN+act+attn:eager:any:resident f16:sdpa:f32:streamed"
while [ $# -gt 0 ]; do
  case "$1" in
    --part) parts=("$2"); shift 2 ;;
    --blocks) stacked=$2; shift 2 ;;
    --batch) batch=$2; shift 2 ;;
    --layers) layers=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --together) togetherBatches=$2; shift 2 ;;
    --together-weights) togetherWeights=$2; shift 2 ;;
    --towers) towers=$2; shift 2 ;;
    *) echo "bench/run siglip: unknown option '$1'" >&2; exit 1 ;;
  esac
done
# f16 with f32 partials (the exporters' default) and with f16 partials
# allowed; f8E4M3FN weights (activations cast to f8 before each GEMM) with
# f16 partials allowed.
for part in "${parts[@]}"; do
  if [ "$part" = export ]; then
    run_export ""
    run_export any
    # transformers' eager attention: the probabilities rounded to f16
    # before P.V, as our block computes them. SDPA's decomposition (above)
    # keeps P.V in f32, PyTorch's own choice for f16 on CPU.
    run_export "" eager
    continue
  fi
  # The whole vision tower as transformers builds it (so400m, 384 px, the
  # attention-pooling head), layers as one body: its linear weights in f8,
  # resident or streamed each layer; in f16, streamed (resident f16
  # weights fit 4 layers).
  if [ "$part" = tower ]; then
    for tower in $towers; do
      IFS=: read -r weights attention partials modes <<< "$tower"
      # Three fields: WEIGHTS:ATTENTION:MODES, f32 partials.
      [ -n "$modes" ] || { modes=$partials; partials=f32; }
      run_tower "$layers" "$weights" "$attention" "$partials" ${modes//+/ }
    done
    continue
  fi
  # The tower on a batch of images, run one image after another
  # (--ipu-separate-images), eager attention, f8 weights resident.
  if [ "$part" = tower-batch ]; then
    for images in $batches; do
      run_tower "$layers" f8E4M3FN eager f32 resident
    done
    together=yes
    for images in $togetherBatches; do
      for weights in $togetherWeights; do
        run_tower "$layers" "$weights" eager any resident
      done
    done
    together=""
    images=1
    continue
  fi
  if [ "$part" = stack ]; then
    run_part block any f16 "$stacked"
    # The same blocks compiled as one body run once per block.
    run_part block any f16 "$stacked" 1 repeat
    continue
  fi
  # The MLP on a batch of images (8 x 729 tokens), which only fits in
  # serial chunks of its rows.
  if [ "$part" = batch ]; then
    for partials in "" any; do
      run_part mlp "$partials" f16 1 "$batch"
    done
    continue
  fi
  # Each weight stored once (the headline: a stack of layers stores them
  # so), then replicated as the planner likes best, its own row.
  for partials in "" any; do
    run_part "$part" "$partials" f16 1 1 "" once
    run_part "$part" "$partials" f16 1 1 "" replicated
  done
  run_part "$part" any f8E4M3FN 1 1 "" once
  run_part "$part" any f8E4M3FN 1 1 "" replicated
done
