//===- KernelFuzzer.cpp - libFuzzer target for the kernel compiler --------===//
//
// A package's kernels are data that ipu-run compiles itself, so the kernel
// compiler must take any body verifyBody accepts: the bytes are read as a
// body (inputs, ops, operands, constants, result, reduction), and a body
// that verifies is compiled (MLIR, LLVM, LLD), loaded and run on a small
// block of fuzzed values. It must never crash, fail to compile or write
// outside its output block (the block sits between guard bytes).
//
//===----------------------------------------------------------------------===//

#include "IPU/KernelCompiler/KernelCompiler.h"
#include "IPU/Device/Elementwise.h"
#include "IPU/Support/ElementType.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

using namespace ipu;

namespace {

/// Constants a body may hold, before rounding to the op's type.
const double kConstants[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 1e-3, 448.0,
                             65504.0, 1e30, -1e-30, __builtin_inf(), -__builtin_inf(),
                             __builtin_nan("")};

/// `value` as the nearest value of `type` (what a verified constant is).
double roundTo(ElementType type, double value) {
  uint8_t bytes[4];
  storeElement(type, static_cast<float>(value), bytes);
  return loadElement(type, bytes);
}

ElementwiseBody bodyFrom(FuzzedDataProvider &data) {
  ElementwiseBody body;
  const unsigned inputs = data.ConsumeIntegralInRange<unsigned>(1, 4);
  for (unsigned i = 0; i < inputs; ++i)
    body.inputs.push_back({static_cast<ElementType>(data.ConsumeIntegralInRange<uint8_t>(0, 3)),
                           static_cast<Broadcast>(data.ConsumeIntegralInRange<uint8_t>(0, 3))});
  const unsigned ops = data.ConsumeIntegralInRange<unsigned>(0, 24);
  for (unsigned i = 0; i < ops; ++i) {
    BodyOp op;
    op.kind = static_cast<BodyOpKind>(data.ConsumeIntegralInRange<uint8_t>(0, kBodyOpKinds - 1));
    op.type = static_cast<ElementType>(data.ConsumeIntegralInRange<uint8_t>(0, 3));
    op.predicate = data.ConsumeIntegralInRange<uint8_t>(0, 15);
    // Every slot is read from the input (so that corpora keep their
    // meaning); those past the kind's arity must be 0 (verifyBody).
    for (unsigned o = 0; o < 3; ++o) {
      const uint32_t operand = data.ConsumeIntegralInRange<uint32_t>(0, inputs + i - 1);
      op.operands[o] = o < bodyOpArity(op.kind) ? operand : 0;
    }
    op.constant = roundTo(op.type, kConstants[data.ConsumeIntegralInRange<size_t>(
                                       0, sizeof(kConstants) / sizeof(kConstants[0]) - 1)]);
    body.ops.push_back(op);
  }
  body.result = data.ConsumeIntegralInRange<uint32_t>(0, inputs + ops - 1);
  body.resultType = body.valueType(body.result).value_or(ElementType::F32);
  body.reduction = static_cast<RowReduction>(data.ConsumeIntegralInRange<uint8_t>(0, 3));
  body.init = body.reduction == RowReduction::Add ? 0.0 : -__builtin_inf();
  return body;
}

/// Bytes of a block of `rows` x `cols` elements of `type`, rows padded to
/// 32-bit words, as the simulator lays operands out.
size_t blockBytes(int64_t rows, int64_t cols, ElementType type) {
  return size_t(rows) * ((size_t(cols) * elementBytes(type) + 3) / 4 * 4);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size) {
  FuzzedDataProvider data(bytes, size);
  ElementwiseBody body = bodyFrom(data);
  if (verifyBody(body))
    return 0;
  Package package;
  package.kernelAbiVersion = kKernelAbiVersion;
  package.kernels.push_back(
      std::make_shared<ElementwiseKernel>("fuzz", elementwiseSymbol(body), body));
  CompiledKernels kernels;
  KernelCompileStats stats;
  if (kernels.load(package, defaultKernelCacheDirectory(), stats))
    __builtin_trap(); // A body verifyBody accepts must compile.

  // A 3 x 5 block: padded rows, both loops; every operand between guards.
  constexpr int64_t kRows = 3, kCols = 5;
  constexpr size_t kGuard = 64;
  const bool reduces = body.reduction != RowReduction::None;
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<uint8_t *> operands;
  for (const ElementwiseInput &input : body.inputs) {
    const int64_t rows = input.broadcast == Broadcast::Full || input.broadcast == Broadcast::Column ? kRows : 1;
    const int64_t cols = input.broadcast == Broadcast::Full || input.broadcast == Broadcast::Row ? kCols : 1;
    std::vector<uint8_t> buffer(blockBytes(rows, cols, input.type) + 2 * kGuard, 0);
    for (size_t b = kGuard; b + kGuard < buffer.size(); ++b)
      buffer[b] = data.ConsumeIntegral<uint8_t>();
    buffers.push_back(std::move(buffer));
  }
  std::vector<uint8_t> output(blockBytes(kRows, reduces ? 1 : kCols, body.resultType) +
                                  2 * kGuard,
                              0xA5);
  for (std::vector<uint8_t> &buffer : buffers)
    operands.push_back(buffer.data() + kGuard);
  operands.push_back(output.data() + kGuard);
  const int64_t params[] = {kRows, kCols};
  package.kernels[0]->entry(operands.data(), params);
  for (size_t b = 0; b < kGuard; ++b)
    if (output[b] != 0xA5 || output[output.size() - 1 - b] != 0xA5)
      __builtin_trap(); // Written outside its block.
  return 0;
}
