//===- Gemm.h - The ipu_gemm dialect ---------------------------*- C++ -*-===//

#ifndef IPU_DIALECT_GEMM_IR_GEMM_H
#define IPU_DIALECT_GEMM_IR_GEMM_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "IPU/Dialect/Tile/IR/Tile.h"
#include "IPU/Planning/GemmPlan.h"

#include "mlir/IR/DialectImplementation.h"

namespace mlir {
/// Parses an enum parameter that may be left out (a constraint's field).
template <typename EnumT>
struct FieldParser<std::optional<EnumT>,
                   std::enable_if_t<std::is_enum_v<EnumT>, std::optional<EnumT>>> {
  static FailureOr<std::optional<EnumT>> parse(AsmParser &parser) {
    FailureOr<EnumT> value = FieldParser<EnumT>::parse(parser);
    if (failed(value))
      return failure();
    return std::optional<EnumT>(*value);
  }
};
} // namespace mlir

#include "IPU/Dialect/Gemm/IR/GemmOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOpsAttributes.h.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOps.h.inc"

#endif
