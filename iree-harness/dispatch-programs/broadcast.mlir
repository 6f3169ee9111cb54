// Broadcasts: row vector, column vector and scalar added to a matrix; a 3-D
// broadcast of a 2-D tensor along the middle axis.
// RUN: --function=row_add --input=64x96xf32 --input=96xf32
// RUN: --function=col_add --input=64x96xf32 --input=64xf32
// RUN: --function=scalar_add --input=64x96xf32 --input=f32
// RUN: --function=outer_mul --input=64xf32 --input=96xf32
// RUN: --function=bcast3d --input=8x16x32xi32 --input=8x32xi32
func.func @row_add(%a: tensor<64x96xf32>, %b: tensor<96xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<64x96xf32>, tensor<96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
func.func @col_add(%a: tensor<64x96xf32>, %b: tensor<64xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %bb = linalg.broadcast ins(%b : tensor<64xf32>) outs(%e : tensor<64x96xf32>) dimensions = [1]
  %e2 = tensor.empty() : tensor<64x96xf32>
  %r = linalg.add ins(%a, %bb : tensor<64x96xf32>, tensor<64x96xf32>) outs(%e2 : tensor<64x96xf32>) -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
func.func @scalar_add(%a: tensor<64x96xf32>, %s: tensor<f32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %s : tensor<64x96xf32>, tensor<f32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    %u = arith.addf %t, %y : f32
    linalg.yield %u : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
func.func @outer_mul(%a: tensor<64xf32>, %b: tensor<96xf32>) -> tensor<64x96xf32> {
  %e = tensor.empty() : tensor<64x96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<64xf32>, tensor<96xf32>) outs(%e : tensor<64x96xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.mulf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<64x96xf32>
  return %r : tensor<64x96xf32>
}
func.func @bcast3d(%a: tensor<8x16x32xi32>, %b: tensor<8x32xi32>) -> tensor<8x16x32xi32> {
  %e = tensor.empty() : tensor<8x16x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a, %b : tensor<8x16x32xi32>, tensor<8x32xi32>) outs(%e : tensor<8x16x32xi32>) {
  ^bb0(%x: i32, %y: i32, %o: i32):
    %t = arith.muli %x, %y : i32
    %u = arith.addi %t, %x : i32
    linalg.yield %u : i32
  } -> tensor<8x16x32xi32>
  return %r : tensor<8x16x32xi32>
}
