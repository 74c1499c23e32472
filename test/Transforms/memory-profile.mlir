// --ipu-compile="memory-profile=FILE" writes the placed memory as JSON
// (docs/MemoryProfile.md): per class the peak against the max-live bound,
// and per tile group the peak step with every buffer live there, each with
// the source location of the op that made it.
// RUN: ipu-opt %s --ipu-compile="target=ipu21-16 memory-profile=%t.json" -o /dev/null
// RUN: FileCheck %s < %t.json
// RUN: %python -c "import json; p = json.load(open('%t.json')); g = p['groups']; assert len(g) == 32, len(g); assert all(sum(b['bytes'] for b in x['buffers']) == x['liveBytes'] for x in g); print('groups', len(g))" | FileCheck %s --check-prefix=SUMS
// SUMS: groups 32

// CHECK:      "schema": "ipu-memory-profile/1",
// CHECK-NEXT: "program": "mm",
// CHECK-NEXT: "target": "ipu21-16",
// CHECK-NEXT: "tiles": 16,
// CHECK:      "reserved": {
// CHECK-NEXT:   "runtimeBytes": 50912,
// CHECK-NEXT:   "exchangeCodeAndVertexStateBytes": {{[0-9]+}}
// CHECK:      "classes": [
// CHECK:        "class": "standard",
// CHECK:        "peakBytes": [[PEAK:[0-9]+]],
// CHECK-NEXT:   "boundBytes": {{[0-9]+}},
// CHECK:        "class": "interleaved",
// CHECK:      "groups": [
// CHECK:        "firstTile": 0,
// CHECK-NEXT:   "lastTile": 0,
// CHECK-NEXT:   "class": "standard",
// CHECK-NEXT:   "peakTile": 0,
// CHECK-NEXT:   "peakStep": {{[0-9]+}},
// CHECK-NEXT:   "liveBytes": {{[1-9][0-9]*}},
// CHECK-NEXT:   "buffers": [
// CHECK-NEXT:     {
// The activation at its argument and the result at the matmul, then in
// interleaved memory the weights (the matmul's B, at the matmul's line).
// CHECK-NEXT:       "name": "arg0",
// CHECK-NEXT:       "location": "{{.*}}memory-profile.mlir:[[@LINE+16]]:15",
// CHECK:            "name": "mm0.out",
// CHECK-NEXT:       "location": "{{.*}}memory-profile.mlir:[[@LINE+16]]:8",
// CHECK:        "firstTile": 0,
// CHECK-NEXT:   "lastTile": 0,
// CHECK-NEXT:   "class": "interleaved",
// CHECK-NEXT:   "peakTile": 0,
// CHECK-NEXT:   "peakStep": {{[0-9]+}},
// CHECK-NEXT:   "liveBytes": 16384,
// CHECK-NEXT:   "buffers": [
// CHECK-NEXT:     {
// CHECK-NEXT:       "name": "arg1",
// CHECK-NEXT:       "location": "{{.*}}memory-profile.mlir:[[@LINE+6]]:8",
// CHECK-NEXT:       "address": {{[0-9]+}},
// CHECK-NEXT:       "bytes": 16384,

func.func @mm(%a: tensor<96x128xf16>, %b: tensor<128x64xf16>) -> tensor<96x64xf32> {
  %init = tensor.empty() : tensor<96x64xf32>
  %c = linalg.matmul ins(%a, %b : tensor<96x128xf16>, tensor<128x64xf16>)
                     outs(%init : tensor<96x64xf32>) -> tensor<96x64xf32>
  return %c : tensor<96x64xf32>
}
