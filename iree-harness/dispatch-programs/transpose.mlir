// Transposes: 2-D f32 (non-square), 2-D i8, 3-D permutations [2, 0, 1] and
// [0, 2, 1] (f32, f16), and a transpose fused with an elementwise add.
// RUN: --function=t2d --input=96x160xf32
// RUN: --function=t2d_i8 --input=64x200xi8
// RUN: --function=t3d_201 --input=8x24x40xf32
// RUN: --function=t3d_021_f16 --input=4x64x48xf16
// RUN: --function=t2d_add --input=128x64xf32 --input=64x128xf32
func.func @t2d(%a: tensor<96x160xf32>) -> tensor<160x96xf32> {
  %e = tensor.empty() : tensor<160x96xf32>
  %r = linalg.transpose ins(%a : tensor<96x160xf32>) outs(%e : tensor<160x96xf32>) permutation = [1, 0]
  return %r : tensor<160x96xf32>
}
func.func @t2d_i8(%a: tensor<64x200xi8>) -> tensor<200x64xi8> {
  %e = tensor.empty() : tensor<200x64xi8>
  %r = linalg.transpose ins(%a : tensor<64x200xi8>) outs(%e : tensor<200x64xi8>) permutation = [1, 0]
  return %r : tensor<200x64xi8>
}
func.func @t3d_201(%a: tensor<8x24x40xf32>) -> tensor<40x8x24xf32> {
  %e = tensor.empty() : tensor<40x8x24xf32>
  %r = linalg.transpose ins(%a : tensor<8x24x40xf32>) outs(%e : tensor<40x8x24xf32>) permutation = [2, 0, 1]
  return %r : tensor<40x8x24xf32>
}
func.func @t3d_021_f16(%a: tensor<4x64x48xf16>) -> tensor<4x48x64xf16> {
  %e = tensor.empty() : tensor<4x48x64xf16>
  %r = linalg.transpose ins(%a : tensor<4x64x48xf16>) outs(%e : tensor<4x48x64xf16>) permutation = [0, 2, 1]
  return %r : tensor<4x48x64xf16>
}
func.func @t2d_add(%a: tensor<128x64xf32>, %b: tensor<64x128xf32>) -> tensor<128x64xf32> {
  %e = tensor.empty() : tensor<128x64xf32>
  %bt = linalg.transpose ins(%b : tensor<64x128xf32>) outs(%e : tensor<128x64xf32>) permutation = [1, 0]
  %r = linalg.add ins(%a, %bt : tensor<128x64xf32>, tensor<128x64xf32>) outs(%e : tensor<128x64xf32>) -> tensor<128x64xf32>
  return %r : tensor<128x64xf32>
}
