//===- Kernels.cpp - The kernel registry: one table of typed entries -------===//
//
// The registry is the single list the verifier, the package translator and
// the simulator consult: each kernel is a spec with its functions
// (KernelFunctions), so that dispatch is a call through the table, never a
// comparison of names. Each kernel's code lives in its own file.
//
//===----------------------------------------------------------------------===//

#include "IPU/Device/Kernels.h"

#include "KernelImpls.h"
#include "IPU/Device/Elementwise.h"

#include <cstring>

namespace ipu {

namespace {

using namespace detail;

/// The AMP's view of a gemm or gemm_t vertex. gemm_t holds blocks of lhs
/// and streams the n rows of rhsT: gemm with the roles of m and n exchanged.
/// accType is the partials type of the AMP. The streamed operand's memory
/// class comes from its address when the caller has one.
GemmCostShape gemmCostShape(const TargetModel &target, const int64_t *params,
                            bool transposed, const uint32_t *operandAddresses) {
  MemoryClass streamed = MemoryClass::Standard;
  if (operandAddresses) {
    uint32_t address = operandAddresses[transposed ? GemmRhs : GemmLhs];
    if (address >= target.interleaved.base && address < target.interleaved.end())
      streamed = MemoryClass::Interleaved;
  }
  return GemmCostShape(params[transposed ? GemmN : GemmM], params[GemmK],
                       params[transposed ? GemmM : GemmN],
                       static_cast<ElementType>(params[GemmIn]),
                       static_cast<ElementType>(params[GemmAcc]),
                       static_cast<ElementType>(params[GemmOut]),
                       static_cast<MemoryClass>(params[GemmWeightClass]), streamed);
}

/// Useful FLOPs of a gemm or gemm_t vertex: 2 * m * k * n. Valid sizes are
/// below 2^24, so the product may still need 73 bits: it saturates.
uint64_t gemmFlops(const KernelSpec &, const int64_t *params) {
  uint64_t flops = 2;
  for (unsigned i = GemmM; i <= GemmN; ++i) {
    if (params[i] <= 0)
      return 0;
    if (__builtin_mul_overflow(flops, static_cast<uint64_t>(params[i]), &flops))
      return UINT64_MAX;
  }
  return flops;
}

/// Data movement and reductions add nothing to the product the user asked
/// for.
uint64_t noFlops(const KernelSpec &, const int64_t *) { return 0; }

/// gemm holds rhs [k x n]; gemm_t holds rhsT, n rows of k.
KernelOperandShape gemmOperandShape(const int64_t *params, unsigned operand,
                                    bool transposed) {
  const int64_t m = params[GemmM], k = params[GemmK], n = params[GemmN];
  const auto in = static_cast<ElementType>(params[GemmIn]);
  switch (operand) {
  case GemmLhs:
    return {m, k, in};
  case GemmRhs:
    return transposed ? KernelOperandShape{n, k, in} : KernelOperandShape{k, n, in};
  case GemmOutput:
    return {m, n, static_cast<ElementType>(params[GemmOut])};
  }
  return {};
}

/// gemm and gemm_t: one table, by orientation (gemm_t holds lhs and streams
/// the rows of rhsT).
template <bool Transposed> constexpr KernelFunctions gemmFunctionsOf() {
  return {
      [](const KernelSpec &, const int64_t *params) {
        return Transposed ? checkGemmTParams(params) : checkGemmParams(params);
      },
      [](const KernelSpec &, const int64_t *params, unsigned operand) {
        return gemmOperandShape(params, operand, Transposed);
      },
      [](const KernelSpec &, const int64_t *params, unsigned operand) {
        return Transposed ? gemmTOperandBytes(params, operand)
                          : gemmOperandBytes(params, operand);
      },
      gemmFlops,
      [](const KernelSpec &, const int64_t *params, const TargetModel &target,
         const uint32_t *addresses) {
        return estimateGemmCycles(target,
                                  gemmCostShape(target, params, Transposed, addresses));
      },
      [](const KernelSpec &, const int64_t *params, const TargetModel &,
       uint8_t *const *operands) {
        if (Transposed)
          executeGemmT(params, operands);
        else
          executeGemm(params, operands);
      }};
}
constexpr KernelFunctions gemmFunctions = gemmFunctionsOf<false>();
constexpr KernelFunctions gemmTFunctions = gemmFunctionsOf<true>();

const KernelFunctions reduceFunctions = {
    [](const KernelSpec &, const int64_t *params) { return checkReduceParams(params); },
    [](const KernelSpec &, const int64_t *params, unsigned operand) -> KernelOperandShape {
      const int64_t m = params[ReduceM], n = params[ReduceN];
      if (operand == ReduceInput)
        return {m, n * params[ReduceCount], static_cast<ElementType>(params[ReduceIn])};
      if (operand == ReduceOutput)
        return {m, n, static_cast<ElementType>(params[ReduceOut])};
      return {};
    },
    [](const KernelSpec &, const int64_t *params, unsigned operand) {
      return reduceOperandBytes(params, operand);
    },
    noFlops,
    [](const KernelSpec &, const int64_t *params, const TargetModel &target,
       const uint32_t *) { return estimateReduceCycles(params, target); },
    [](const KernelSpec &, const int64_t *params, const TargetModel &,
       uint8_t *const *operands) {
      executeReduce(params, operands);
    }};

/// reduce_columns_<reduction>: one table per reduction, which the kernel's
/// name carries (vertices hold integer parameters only).
template <RowReduction Reduction> constexpr KernelFunctions columnReduceFunctionsOf() {
  return {
      [](const KernelSpec &kernel, const int64_t *params) {
        return checkColumnReduceParams(kernel.name, params);
      },
      [](const KernelSpec &, const int64_t *params, unsigned operand) {
        return columnReduceOperandShape(params, operand);
      },
      [](const KernelSpec &, const int64_t *params, unsigned operand) -> uint64_t {
        KernelOperandShape shape = columnReduceOperandShape(params, operand);
        return shape.type ? static_cast<uint64_t>(shape.rows) * rowPitch(shape.cols, *shape.type)
                          : 0;
      },
      noFlops,
      [](const KernelSpec &, const int64_t *params, const TargetModel &target,
         const uint32_t *) { return estimateColumnReduceCycles(params, target); },
      [](const KernelSpec &, const int64_t *params, const TargetModel &,
       uint8_t *const *operands) {
        executeColumnReduce(Reduction, params, operands);
      }};
}
constexpr KernelFunctions columnAddFunctions = columnReduceFunctionsOf<RowReduction::Add>();
constexpr KernelFunctions columnMaxFunctions = columnReduceFunctionsOf<RowReduction::Max>();
constexpr KernelFunctions columnMaxNumFunctions =
    columnReduceFunctionsOf<RowReduction::MaxNum>();

const KernelFunctions copyFunctions = {
    [](const KernelSpec &, const int64_t *params) { return checkCopyParams(params); },
    [](const KernelSpec &, const int64_t *params, unsigned operand) -> KernelOperandShape {
      if (operand < 2)
        return {1, params[CopyBytes], std::nullopt};
      return {};
    },
    [](const KernelSpec &, const int64_t *params, unsigned) {
      return static_cast<uint64_t>(params[CopyBytes]);
    },
    noFlops,
    [](const KernelSpec &, const int64_t *params, const TargetModel &target,
       const uint32_t *) { return estimateCopyCycles(params, target); },
    [](const KernelSpec &, const int64_t *params, const TargetModel &,
       uint8_t *const *operands) {
      std::memmove(operands[1], operands[0], static_cast<size_t>(params[CopyBytes]));
    }};

const KernelFunctions transposeFunctions = {
    [](const KernelSpec &, const int64_t *params) { return checkTransposeParams(params); },
    [](const KernelSpec &, const int64_t *params, unsigned operand) -> KernelOperandShape {
      if (operand < 2)
        return transposeOperandShape(params, operand);
      return {};
    },
    [](const KernelSpec &, const int64_t *params, unsigned operand) {
      return transposeOperandBytes(params, operand);
    },
    noFlops,
    [](const KernelSpec &, const int64_t *params, const TargetModel &target,
       const uint32_t *) { return estimateTransposeCycles(params, target); },
    [](const KernelSpec &, const int64_t *params, const TargetModel &,
       uint8_t *const *operands) {
      executeTranspose(params, operands);
    }};

} // namespace

const KernelFunctions detail::elementwiseFunctions = {
    [](const KernelSpec &kernel, const int64_t *params) {
      return checkElementwiseParams(*kernel.elementwise, params);
    },
    [](const KernelSpec &kernel, const int64_t *params, unsigned operand) {
      return elementwiseOperandShape(*kernel.elementwise, params, operand);
    },
    [](const KernelSpec &kernel, const int64_t *params, unsigned operand) {
      KernelOperandShape shape = elementwiseOperandShape(*kernel.elementwise, params, operand);
      return shape.rows * rowPitch(shape.cols, *shape.type);
    },
    noFlops,
    [](const KernelSpec &kernel, const int64_t *params, const TargetModel &target,
       const uint32_t *) {
      return estimateElementwise(target, kernel.elementwise->body(), params[ElementwiseRows],
                                 params[ElementwiseCols])
          .total;
    },
    [](const KernelSpec &kernel, const int64_t *params, const TargetModel &target,
       uint8_t *const *operands) {
      // Only a compiled kernel has code: the simulator refuses a compute set
      // whose generated kernel has no entry (CompiledKernels sets them).
      executeElementwise(*kernel.elementwise, params, target, operands);
    }};

const std::vector<KernelSpec> &allKernels() {
  static const std::vector<KernelSpec> kernels = {
      {"gemm",
       {"lhs", "rhs", "out"},
       {"m", "k", "n", "inType", "accType", "outType", "weightClass", "inputScale"},
       &gemmFunctions,
       GemmRhs,
       GemmWeightClass},
      {"gemm_t",
       {"lhs", "rhsT", "out"},
       {"m", "k", "n", "inType", "accType", "outType", "ampClass", "inputScale"},
       &gemmTFunctions,
       GemmLhs,
       GemmWeightClass},
      {"reduce", {"in", "out"}, {"m", "n", "count", "inType", "outType"}, &reduceFunctions},
      {"reduce_columns_add", {"in", "out"}, {"batches", "count", "n", "outType"},
       &columnAddFunctions},
      {"reduce_columns_max", {"in", "out"}, {"batches", "count", "n", "outType"},
       &columnMaxFunctions},
      {"reduce_columns_maxnum", {"in", "out"}, {"batches", "count", "n", "outType"},
       &columnMaxNumFunctions},
      {"copy", {"src", "dst"}, {"bytes"}, &copyFunctions},
      {"transpose", {"src", "dst"}, {"rows", "cols", "type"}, &transposeFunctions},
  };
  return kernels;
}

const KernelSpec *lookupKernel(std::string_view name) {
  for (const KernelSpec &kernel : allKernels())
    if (kernel.name == name)
      return &kernel;
  return nullptr;
}

std::optional<std::string> checkKernelParams(const KernelSpec &kernel,
                                             const int64_t *params) {
  if (!kernel.functions)
    return std::string(kernel.name) + ": unknown kernel";
  return kernel.functions->checkParams(kernel, params);
}

uint64_t kernelOperandBytes(const KernelSpec &kernel, const int64_t *params,
                            unsigned operand) {
  return kernel.functions ? kernel.functions->operandBytes(kernel, params, operand) : 0;
}

KernelOperandShape kernelOperandShape(const KernelSpec &kernel, const int64_t *params,
                                      unsigned operand) {
  return kernel.functions ? kernel.functions->operandShape(kernel, params, operand)
                          : KernelOperandShape();
}

uint64_t kernelFlops(const KernelSpec &kernel, const int64_t *params) {
  return kernel.functions ? kernel.functions->flops(kernel, params) : 0;
}

uint64_t estimateKernelCycles(const KernelSpec &kernel, const int64_t *params,
                              const TargetModel &target,
                              const uint32_t *operandAddresses) {
  // Invalid parameters have no meaningful cost; callers check them first.
  if (checkKernelParams(kernel, params))
    return 0;
  return kernel.functions->estimateCycles(kernel, params, target, operandAddresses);
}

void executeKernel(const KernelSpec &kernel, const int64_t *params,
                   const TargetModel &target, uint8_t *const *operands) {
  if (kernel.functions)
    kernel.functions->execute(kernel, params, target, operands);
}

} // namespace ipu
