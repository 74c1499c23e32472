//===- TileEnums.td - Enums of the IPU dialects ------------*- tablegen -*-===//
//
// The closed sets of names the dialects' attributes take, as typed enums:
// printed as bare keywords, checked by the parser, switched on in C++.
//
//===----------------------------------------------------------------------===//

#ifndef IPU_TILE_ENUMS
#define IPU_TILE_ENUMS

include "mlir/IR/EnumAttr.td"

def IPUTile_MemoryClass : I32EnumAttr<"MemoryClass", "Tile memory class", [
    I32EnumAttrCase<"standard", 0>,
    I32EnumAttrCase<"interleaved", 1>]> {
  let cppNamespace = "::mlir::ipu_tile";
  let description = [{
    Where a buffer lives on its tiles: `standard` memory or `interleaved`
    memory, from which the AMP loads its held operand twice as fast.
  }];
}

def IPUTile_RowReduction : I32EnumAttr<"RowReduction", "Row reduction", [
    I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"max", 2>,
    I32EnumAttrCase<"maxnum", 3>]> {
  let cppNamespace = "::mlir::ipu_tile";
  let description = [{
    How a row reduction combines the values of a row: `add` sums them,
    `max` takes `arith.maximumf`'s maximum (NaN wins), `maxnum`
    `arith.maxnumf`'s (NaN loses to a number). Values match
    `::ipu::RowReduction`.
  }];
}

def IPUGemm_Orientation : I32EnumAttr<"Orientation", "GEMM orientation", [
    I32EnumAttrCase<"normal", 0>,
    I32EnumAttrCase<"swapped", 1>]> {
  let cppNamespace = "::mlir::ipu_gemm";
  let genSpecializedAttr = 0;
  let description = [{
    `normal`: the AMP holds blocks of B and streams the rows of A.
    `swapped`: the AMP holds blocks of A and streams the columns of B
    (stored as B^T).
  }];
}

def IPUGemm_Reduction : I32EnumAttr<"Reduction", "Reduction of inner partials", [
    I32EnumAttrCase<"complete", 0>,
    I32EnumAttrCase<"staged", 1>]> {
  let cppNamespace = "::mlir::ipu_gemm";
  let genSpecializedAttr = 0;
  let description = [{
    `complete`: every partial of a block is summed on one tile. `staged`:
    the block's rows are split again over its inner tiles, each summing a
    share.
  }];
}

def IPUExchange_Strategy : I32EnumAttr<"Strategy", "Exchange scheduler", [
    I32EnumAttrCase<"sequential", 0>,
    I32EnumAttrCase<"greedy", 1>,
    I32EnumAttrCase<"preemptive", 2>,
    I32EnumAttrCase<"exact", 3>,
    I32EnumAttrCase<"timed", 4>]> {
  let cppNamespace = "::mlir::ipu_exchange";
  let genSpecializedAttr = 0;
  let description = [{
    The scheduler whose timetable an exchange phase keeps.
  }];
}

#endif // IPU_TILE_ENUMS
