// Argmax over the last axis: one linalg.generic with two outputs (value, index);
// the first index wins ties (i32 inputs from [-8, 8) tie often).
// RUN: --function=argmax_f32_i64 --input=64x128xf32
// RUN: --function=argmax_i32_i32 --input=32x256xi32
func.func @argmax_f32_i64(%a: tensor<64x128xf32>) -> (tensor<64xf32>, tensor<64xi64>) {
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0 : i64
  %ev = tensor.empty() : tensor<64xf32>
  %ei = tensor.empty() : tensor<64xi64>
  %fv = linalg.fill ins(%ninf : f32) outs(%ev : tensor<64xf32>) -> tensor<64xf32>
  %fi = linalg.fill ins(%z : i64) outs(%ei : tensor<64xi64>) -> tensor<64xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x128xf32>) outs(%fv, %fi : tensor<64xf32>, tensor<64xi64>) {
  ^bb0(%x: f32, %best: f32, %bi: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %gt = arith.cmpf ogt, %x, %best : f32
    %v = arith.select %gt, %x, %best : f32
    %i = arith.select %gt, %ji, %bi : i64
    linalg.yield %v, %i : f32, i64
  } -> (tensor<64xf32>, tensor<64xi64>)
  return %r#0, %r#1 : tensor<64xf32>, tensor<64xi64>
}
func.func @argmax_i32_i32(%a: tensor<32x256xi32>) -> (tensor<32xi32>, tensor<32xi32>) {
  %min = arith.constant -2147483648 : i32
  %z = arith.constant 0 : i32
  %ev = tensor.empty() : tensor<32xi32>
  %fv = linalg.fill ins(%min : i32) outs(%ev : tensor<32xi32>) -> tensor<32xi32>
  %fi = linalg.fill ins(%z : i32) outs(%ev : tensor<32xi32>) -> tensor<32xi32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<32x256xi32>) outs(%fv, %fi : tensor<32xi32>, tensor<32xi32>) {
  ^bb0(%x: i32, %best: i32, %bi: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %gt = arith.cmpi sgt, %x, %best : i32
    %v = arith.select %gt, %x, %best : i32
    %i = arith.select %gt, %ji, %bi : i32
    linalg.yield %v, %i : i32, i32
  } -> (tensor<32xi32>, tensor<32xi32>)
  return %r#0, %r#1 : tensor<32xi32>, tensor<32xi32>
}
