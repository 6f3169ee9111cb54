// CHECK-MODULE
// Check-framework tests (iree-check-module): each function computes on values IREE cannot
// fold away (util.unfoldable_constant) and checks the result against what a person can
// work out by hand.
func.func @matmul_f32_splats() {
  %a = util.unfoldable_constant dense<0.5> : tensor<64x32xf32>
  %b = util.unfoldable_constant dense<2.0> : tensor<32x48xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x48xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x48xf32>) -> tensor<64x48xf32>
  %r = linalg.matmul ins(%a, %b : tensor<64x32xf32>, tensor<32x48xf32>) outs(%f : tensor<64x48xf32>) -> tensor<64x48xf32>
  check.expect_almost_eq_const(%r, dense<32.0> : tensor<64x48xf32>) : tensor<64x48xf32>
  return
}
func.func @matmul_f16_accumulates_in_f32() {
  %a = util.unfoldable_constant dense<0.25> : tensor<32x64xf16>
  %b = util.unfoldable_constant dense<3.0> : tensor<64x32xf16>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
  %r = linalg.matmul ins(%a, %b : tensor<32x64xf16>, tensor<64x32xf16>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
  check.expect_almost_eq_const(%r, dense<48.0> : tensor<32x32xf32>) : tensor<32x32xf32>
  return
}
func.func @matmul_i8_to_i32() {
  %a = util.unfoldable_constant dense<-3> : tensor<32x64xi8>
  %b = util.unfoldable_constant dense<5> : tensor<64x32xi8>
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<32x32xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<32x32xi32>) -> tensor<32x32xi32>
  %r = linalg.matmul ins(%a, %b : tensor<32x64xi8>, tensor<64x32xi8>) outs(%f : tensor<32x32xi32>) -> tensor<32x32xi32>
  check.expect_eq_const(%r, dense<-960> : tensor<32x32xi32>) : tensor<32x32xi32>
  return
}
func.func @row_sums_of_a_ramp() {
  %a = util.unfoldable_constant dense<[[1, 2, 3, 4], [10, 20, 30, 40], [-1, -1, -1, -1]]> : tensor<3x4xi32>
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<3xi32>) -> tensor<3xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<3x4xi32>) outs(%f : tensor<3xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<3xi32>
  check.expect_eq_const(%r, dense<[10, 100, -4]> : tensor<3xi32>) : tensor<3xi32>
  return
}
func.func @softmax_of_equal_logits_is_uniform() {
  %a = util.unfoldable_constant dense<7.0> : tensor<8x256xf32>
  %e = tensor.empty() : tensor<8x256xf32>
  %r = linalg.softmax dimension(1) ins(%a : tensor<8x256xf32>) outs(%e : tensor<8x256xf32>) -> tensor<8x256xf32>
  check.expect_almost_eq_const(%r, dense<0.00390625> : tensor<8x256xf32>) : tensor<8x256xf32>
  return
}
func.func @transpose_then_add() {
  %a = util.unfoldable_constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%a : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %r = arith.addf %t, %t : tensor<3x2xf32>
  check.expect_almost_eq_const(%r, dense<[[2.0, 8.0], [4.0, 10.0], [6.0, 12.0]]> : tensor<3x2xf32>) : tensor<3x2xf32>
  return
}
