// StableHLO input: elementwise with broadcast_in_dim, dot_general (batched),
// reduce (sum over an axis), transpose + reshape, a cumulative sum by
// reduce_window, gather (index_select of rows), scatter-add, sort and
// clamp/select/compare.
// RUN: --function=bias_tanh --input=32x64xf32 --input=64xf32
// RUN: --function=batched_dot --input=4x32x16xf32 --input=4x16x48xf32
// RUN: --function=reduce_sum --input=16x32x24xf32
// RUN: --function=transpose_reshape --input=8x16x32xf32
// RUN: --function=cumsum_window --input=8x128xi32
// RUN: --function=gather_rows --input=64x32xf32 --input=24xi32
// RUN: --function=scatter_add --input=32x8xi32 --input=20xi32 --input=20x8xi32
// RUN: --function=sort_rows --input=16x64xf32
// RUN: --function=clamp_select --input=1024xi32 --input=1024xi32
func.func @bias_tanh(%a: tensor<32x64xf32>, %b: tensor<64xf32>) -> tensor<32x64xf32> {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<32x64xf32>
  %s = stablehlo.add %a, %bb : tensor<32x64xf32>
  %t = stablehlo.tanh %s : tensor<32x64xf32>
  %m = stablehlo.multiply %t, %a : tensor<32x64xf32>
  return %m : tensor<32x64xf32>
}
func.func @batched_dot(%a: tensor<4x32x16xf32>, %b: tensor<4x16x48xf32>) -> tensor<4x32x48xf32> {
  %r = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x32x16xf32>, tensor<4x16x48xf32>) -> tensor<4x32x48xf32>
  return %r : tensor<4x32x48xf32>
}
func.func @reduce_sum(%a: tensor<16x32x24xf32>) -> tensor<16x24xf32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %r = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [1] : (tensor<16x32x24xf32>, tensor<f32>) -> tensor<16x24xf32>
  return %r : tensor<16x24xf32>
}
func.func @transpose_reshape(%a: tensor<8x16x32xf32>) -> tensor<32x128xf32> {
  %t = stablehlo.transpose %a, dims = [2, 0, 1] : (tensor<8x16x32xf32>) -> tensor<32x8x16xf32>
  %r = stablehlo.reshape %t : (tensor<32x8x16xf32>) -> tensor<32x128xf32>
  %e = stablehlo.exponential %r : tensor<32x128xf32>
  return %e : tensor<32x128xf32>
}
func.func @cumsum_window(%a: tensor<8x128xi32>) -> tensor<8x128xi32> {
  %z = stablehlo.constant dense<0> : tensor<i32>
  %r = "stablehlo.reduce_window"(%a, %z) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {window_dimensions = array<i64: 1, 128>, window_strides = array<i64: 1, 1>, padding = dense<[[0, 0], [127, 0]]> : tensor<2x2xi64>} : (tensor<8x128xi32>, tensor<i32>) -> tensor<8x128xi32>
  return %r : tensor<8x128xi32>
}
func.func @gather_rows(%table: tensor<64x32xf32>, %idx: tensor<24xi32>) -> tensor<24x32xf32> {
  // rows (k + 8) * 4 in [0, 64)
  %c8 = stablehlo.constant dense<8> : tensor<24xi32>
  %c4 = stablehlo.constant dense<4> : tensor<24xi32>
  %k8 = stablehlo.add %idx, %c8 : tensor<24xi32>
  %rows = stablehlo.multiply %k8, %c4 : tensor<24xi32>
  %ri = stablehlo.reshape %rows : (tensor<24xi32>) -> tensor<24x1xi32>
  %r = "stablehlo.gather"(%table, %ri) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 32>, indices_are_sorted = false} : (tensor<64x32xf32>, tensor<24x1xi32>) -> tensor<24x32xf32>
  return %r : tensor<24x32xf32>
}
func.func @scatter_add(%orig: tensor<32x8xi32>, %idx: tensor<20xi32>, %upd: tensor<20x8xi32>) -> tensor<32x8xi32> {
  // rows (k + 8) * 2 in [0, 32), repeating
  %c8 = stablehlo.constant dense<8> : tensor<20xi32>
  %c2 = stablehlo.constant dense<2> : tensor<20xi32>
  %k8 = stablehlo.add %idx, %c8 : tensor<20xi32>
  %rows = stablehlo.multiply %k8, %c2 : tensor<20xi32>
  %ri = stablehlo.reshape %rows : (tensor<20xi32>) -> tensor<20x1xi32>
  %r = "stablehlo.scatter"(%orig, %ri, %upd) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %s = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<32x8xi32>, tensor<20x1xi32>, tensor<20x8xi32>) -> tensor<32x8xi32>
  return %r : tensor<32x8xi32>
}
func.func @sort_rows(%a: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = "stablehlo.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = stablehlo.compare GT, %x, %y, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<16x64xf32>) -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
func.func @clamp_select(%a: tensor<1024xi32>, %b: tensor<1024xi32>) -> tensor<1024xi32> {
  %lo = stablehlo.constant dense<-3> : tensor<i32>
  %hi = stablehlo.constant dense<5> : tensor<i32>
  %c = stablehlo.clamp %lo, %a, %hi : (tensor<i32>, tensor<1024xi32>, tensor<i32>) -> tensor<1024xi32>
  %lt = stablehlo.compare LT, %a, %b, SIGNED : (tensor<1024xi32>, tensor<1024xi32>) -> tensor<1024xi1>
  %m = stablehlo.multiply %a, %b : tensor<1024xi32>
  %s = stablehlo.select %lt, %c, %m : tensor<1024xi1>, tensor<1024xi32>
  %n = stablehlo.negate %s : tensor<1024xi32>
  %r = stablehlo.abs %n : tensor<1024xi32>
  return %r : tensor<1024xi32>
}
