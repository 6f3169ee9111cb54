// Matmuls on gfx942's 8-bit floats (FNUZ variants: MFMA f32 16x16x32 fp8.fp8 and
// bf8.bf8). The inputs are the 8-bit patterns (random i8, bitcast in the program: llvm-cpu
// cannot round f32 to these types), so both targets multiply the same values, from
// subnormals to +-240 (fp8) or +-57344 (bf8); products accumulate in f32. The reference
// (matmul_fp8.reference) decodes the same bits to f32 with integer operations for llvm-cpu.
// SKIP-TARGET: gfx90a has no fp8 or bf8 types (iree-compile fails for it)
// SKIP-TARGET: gfx1100 has no FNUZ fp8 or bf8 types (iree-compile fails for it)
// REFERENCE-PROGRAM: matmul_fp8.reference
// RUN: --function=mm_fp8 --input=64x64xi8 --input=64x64xi8
// RUN: --function=mm_bf8 --input=64x64xi8 --input=64x64xi8
func.func @mm_fp8(%a8: tensor<64x64xi8>, %b8: tensor<64x64xi8>) -> tensor<64x64xf32> {
  %a = arith.bitcast %a8 : tensor<64x64xi8> to tensor<64x64xf8E4M3FNUZ>
  %b = arith.bitcast %b8 : tensor<64x64xi8> to tensor<64x64xf8E4M3FNUZ>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf8E4M3FNUZ>, tensor<64x64xf8E4M3FNUZ>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
func.func @mm_bf8(%a8: tensor<64x64xi8>, %b8: tensor<64x64xi8>) -> tensor<64x64xf32> {
  %a = arith.bitcast %a8 : tensor<64x64xi8> to tensor<64x64xf8E5M2FNUZ>
  %b = arith.bitcast %b8 : tensor<64x64xi8> to tensor<64x64xf8E5M2FNUZ>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf8E5M2FNUZ>, tensor<64x64xf8E5M2FNUZ>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
