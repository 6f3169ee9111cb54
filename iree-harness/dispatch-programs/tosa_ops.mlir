// TOSA input: add/mul with broadcast, clamp (relu6), matmul (batched),
// reduce_sum and reduce_max, transpose, exp/sigmoid, cast i32 -> f32, and a
// padded conv2d (NHWC input, OHWI weights) with bias.
// RUN: --function=add_mul --input=16x64xf32 --input=1x64xf32
// RUN: --function=relu6 --input=4096xf32
// RUN: --function=matmul --input=2x32x16xf32 --input=2x16x48xf32
// RUN: --function=reduce --input=16x32x24xf32
// RUN: --function=transpose --input=8x16x32xf32
// RUN: --function=sigmoid --input=2048xf32
// RUN: --function=cast_add --input=64x64xi32 --input=64x64xf32
// RUN: --function=conv2d --input=1x16x16x8xf32 --input=16x3x3x8xf32 --input=16xf32
func.func @add_mul(%a: tensor<16x64xf32>, %b: tensor<1x64xf32>) -> tensor<16x64xf32> {
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %s = tosa.add %a, %b : (tensor<16x64xf32>, tensor<1x64xf32>) -> tensor<16x64xf32>
  %m = tosa.mul %s, %a, %shift : (tensor<16x64xf32>, tensor<16x64xf32>, tensor<1xi8>) -> tensor<16x64xf32>
  return %m : tensor<16x64xf32>
}
func.func @relu6(%a: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = tosa.clamp %a {min_val = 0.0 : f32, max_val = 0.5 : f32} : (tensor<4096xf32>) -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}
func.func @matmul(%a: tensor<2x32x16xf32>, %b: tensor<2x16x48xf32>) -> tensor<2x32x48xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.matmul %a, %b, %zp, %zp : (tensor<2x32x16xf32>, tensor<2x16x48xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x32x48xf32>
  return %r : tensor<2x32x48xf32>
}
func.func @reduce(%a: tensor<16x32x24xf32>) -> (tensor<16x1x24xf32>, tensor<16x32x1xf32>) {
  %s = tosa.reduce_sum %a {axis = 1 : i32} : (tensor<16x32x24xf32>) -> tensor<16x1x24xf32>
  %m = tosa.reduce_max %a {axis = 2 : i32} : (tensor<16x32x24xf32>) -> tensor<16x32x1xf32>
  return %s, %m : tensor<16x1x24xf32>, tensor<16x32x1xf32>
}
func.func @transpose(%a: tensor<8x16x32xf32>) -> tensor<32x8x16xf32> {
  %r = tosa.transpose %a {perms = array<i32: 2, 0, 1>} : (tensor<8x16x32xf32>) -> tensor<32x8x16xf32>
  return %r : tensor<32x8x16xf32>
}
func.func @sigmoid(%a: tensor<2048xf32>) -> tensor<2048xf32> {
  %r = tosa.sigmoid %a : (tensor<2048xf32>) -> tensor<2048xf32>
  %e = tosa.exp %a : (tensor<2048xf32>) -> tensor<2048xf32>
  %s = tosa.sub %r, %e : (tensor<2048xf32>, tensor<2048xf32>) -> tensor<2048xf32>
  return %s : tensor<2048xf32>
}
func.func @cast_add(%a: tensor<64x64xi32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = tosa.cast %a : (tensor<64x64xi32>) -> tensor<64x64xf32>
  %r = tosa.add %c, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = tosa.maximum %r, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  return %m : tensor<64x64xf32>
}
func.func @conv2d(%x: tensor<1x16x16x8xf32>, %w: tensor<16x3x3x8xf32>, %b: tensor<16xf32>) -> tensor<1x16x16x16xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %r = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x16x16x8xf32>, tensor<16x3x3x8xf32>, tensor<16xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x16x16x16xf32>
  return %r : tensor<1x16x16x16xf32>
}
