// Every f8E4M3FN code (the two NaN codes, 0x7F and 0xFF, replaced by 0)
// widened to f32 and added to the argument: decoded by the device's
// generated kernel and by upstream MLIR's execution (ipu-mlir-run expands
// f8 by its bits), two decoders written apart (mlir-reference.test).
func.func @main(%x: tensor<2x128xf32>) -> tensor<2x128xf32> {
  %codes = arith.constant dense<"0x000102030405060708090A0B0C0D0E0F101112131415161718191A1B1C1D1E1F202122232425262728292A2B2C2D2E2F303132333435363738393A3B3C3D3E3F404142434445464748494A4B4C4D4E4F505152535455565758595A5B5C5D5E5F606162636465666768696A6B6C6D6E6F707172737475767778797A7B7C7D7E00808182838485868788898A8B8C8D8E8F909192939495969798999A9B9C9D9E9FA0A1A2A3A4A5A6A7A8A9AAABACADAEAFB0B1B2B3B4B5B6B7B8B9BABBBCBDBEBFC0C1C2C3C4C5C6C7C8C9CACBCCCDCECFD0D1D2D3D4D5D6D7D8D9DADBDCDDDEDFE0E1E2E3E4E5E6E7E8E9EAEBECEDEEEFF0F1F2F3F4F5F6F7F8F9FAFBFCFDFE00"> : tensor<2x128xf8E4M3FN>
  %empty = tensor.empty() : tensor<2x128xf32>
  %wide = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%codes : tensor<2x128xf8E4M3FN>) outs(%empty : tensor<2x128xf32>) {
  ^bb0(%in: f8E4M3FN, %out: f32):
    %v = arith.extf %in : f8E4M3FN to f32
    linalg.yield %v : f32
  } -> tensor<2x128xf32>
  %sum = linalg.add ins(%wide, %x : tensor<2x128xf32>, tensor<2x128xf32>) outs(%empty : tensor<2x128xf32>) -> tensor<2x128xf32>
  return %sum : tensor<2x128xf32>
}
