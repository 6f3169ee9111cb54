// Matmul and batch_matmul over element types, accumulating wide: f16 -> f32,
// bf16 -> f32, i8 -> i32 (linalg.matmul ins narrow outs wide), f16 widened with
// arith.extf in a generic contraction, and f32 batch_matmul.
// RUN: --function=mm_f16_f32 --input=64x64xf16 --input=64x64xf16 --tolerance=1e-3,1e-4
// RUN: --function=mm_f16_generic --input=64x128xf16 --input=128x32xf16 --tolerance=1e-3,1e-4
// RUN: --function=mm_bf16_f32 --input=64x64xbf16 --input=64x64xbf16 --tolerance=1e-3,1e-4
// RUN: --function=mm_i8_i32 --input=64x64xi8 --input=64x64xi8
// RUN: --function=bmm_f32 --input=4x32x64xf32 --input=4x64x48xf32
// RUN: --function=bmm_f16_f32 --input=4x32x64xf16 --input=4x64x32xf16 --tolerance=1e-3,1e-4
// RUN: --function=bmm_i8_i32 --input=2x64x32xi8 --input=2x32x64xi8
func.func @mm_f16_f32(%a: tensor<64x64xf16>, %b: tensor<64x64xf16>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf16>, tensor<64x64xf16>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
func.func @mm_f16_generic(%a: tensor<64x128xf16>, %b: tensor<128x32xf16>) -> tensor<64x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x32xf32>) -> tensor<64x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>, affine_map<(i, j, k) -> (i, j)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : tensor<64x128xf16>, tensor<128x32xf16>) outs(%f : tensor<64x32xf32>) {
  ^bb0(%x: f16, %y: f16, %acc: f32):
    %xf = arith.extf %x : f16 to f32
    %yf = arith.extf %y : f16 to f32
    %p = arith.mulf %xf, %yf : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
func.func @mm_bf16_f32(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xbf16>, tensor<64x64xbf16>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
func.func @mm_i8_i32(%a: tensor<64x64xi8>, %b: tensor<64x64xi8>) -> tensor<64x64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64x64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<64x64xi32>) -> tensor<64x64xi32>
  %r = linalg.matmul ins(%a, %b : tensor<64x64xi8>, tensor<64x64xi8>) outs(%f : tensor<64x64xi32>) -> tensor<64x64xi32>
  return %r : tensor<64x64xi32>
}
func.func @bmm_f32(%a: tensor<4x32x64xf32>, %b: tensor<4x64x48xf32>) -> tensor<4x32x48xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x32x48xf32>) -> tensor<4x32x48xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x32x64xf32>, tensor<4x64x48xf32>) outs(%f : tensor<4x32x48xf32>) -> tensor<4x32x48xf32>
  return %r : tensor<4x32x48xf32>
}
func.func @bmm_f16_f32(%a: tensor<4x32x64xf16>, %b: tensor<4x64x32xf16>) -> tensor<4x32x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<4x32x64xf16>, tensor<4x64x32xf16>) outs(%f : tensor<4x32x32xf32>) -> tensor<4x32x32xf32>
  return %r : tensor<4x32x32xf32>
}
func.func @bmm_i8_i32(%a: tensor<2x64x32xi8>, %b: tensor<2x32x64xi8>) -> tensor<2x64x64xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<2x64x64xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<2x64x64xi32>) -> tensor<2x64x64xi32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<2x64x32xi8>, tensor<2x32x64xi8>) outs(%f : tensor<2x64x64xi32>) -> tensor<2x64x64xi32>
  return %r : tensor<2x64x64xi32>
}
