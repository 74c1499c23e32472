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

#include "IPU/Planning/GemmPlan.h"

#include "IPU/Dialect/Gemm/IR/GemmOpsDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOpsAttributes.h.inc"

#define GET_OP_CLASSES
#include "IPU/Dialect/Gemm/IR/GemmOps.h.inc"

#endif
