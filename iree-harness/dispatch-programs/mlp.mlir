// A small MLP, f32: x[16x128] -> dense(128->128) + bias, relu -> dense(128->64)
// + bias, relu. Weights and biases come in as inputs; a second variant uses
// constant weights (splat and iota-like generics).
// RUN: --function=mlp --input=16x128xf32 --input=128x128xf32 --input=128xf32 --input=128x64xf32 --input=64xf32
// RUN: --function=mlp_const --input=16x128xf32
func.func private @dense_relu(%x: tensor<16x128xf32>, %w: tensor<128x128xf32>, %b: tensor<128xf32>) -> tensor<16x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  %m = linalg.matmul ins(%x, %w : tensor<16x128xf32>, tensor<128x128xf32>) outs(%f : tensor<16x128xf32>) -> tensor<16x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b : tensor<16x128xf32>, tensor<128xf32>) outs(%e : tensor<16x128xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %y = arith.maximumf %s, %z : f32
    linalg.yield %y : f32
  } -> tensor<16x128xf32>
  return %r : tensor<16x128xf32>
}
func.func @mlp(%x: tensor<16x128xf32>, %w1: tensor<128x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x64xf32>, %b2: tensor<64xf32>) -> tensor<16x64xf32> {
  %z = arith.constant 0.0 : f32
  %h = call @dense_relu(%x, %w1, %b1) : (tensor<16x128xf32>, tensor<128x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%h, %w2 : tensor<16x128xf32>, tensor<128x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b2 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %y = arith.maximumf %s, %z : f32
    linalg.yield %y : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
func.func @mlp_const(%x: tensor<16x128xf32>) -> tensor<16x64xf32> {
  %z = arith.constant 0.0 : f32
  // w1[k, j] = ((k * 7 + j * 3) mod 17 - 8) / 64, b1 = 0.125 splat
  %e1 = tensor.empty() : tensor<128x128xf32>
  %w1 = linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>], iterator_types = ["parallel", "parallel"]} outs(%e1 : tensor<128x128xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c7 = arith.constant 7 : index
    %c3 = arith.constant 3 : index
    %c17 = arith.constant 17 : index
    %c8 = arith.constant 8.0 : f32
    %c64 = arith.constant 64.0 : f32
    %a = arith.muli %k, %c7 : index
    %b = arith.muli %j, %c3 : index
    %s = arith.addi %a, %b : index
    %m = arith.remui %s, %c17 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %d = arith.subf %mf, %c8 : f32
    %v = arith.divf %d, %c64 : f32
    linalg.yield %v : f32
  } -> tensor<128x128xf32>
  %b1 = arith.constant dense<0.125> : tensor<128xf32>
  %h = call @dense_relu(%x, %w1, %b1) : (tensor<16x128xf32>, tensor<128x128xf32>, tensor<128xf32>) -> tensor<16x128xf32>
  // w2 = -1/32 splat except a +1/16 diagonal band, b2 = iota / 64
  %e2 = tensor.empty() : tensor<128x64xf32>
  %w2 = linalg.generic {indexing_maps = [affine_map<(k, j) -> (k, j)>], iterator_types = ["parallel", "parallel"]} outs(%e2 : tensor<128x64xf32>) {
  ^bb0(%o: f32):
    %k = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c2 = arith.constant 2 : index
    %j2 = arith.muli %j, %c2 : index
    %eq = arith.cmpi eq, %k, %j2 : index
    %p = arith.constant 0.0625 : f32
    %n = arith.constant -0.03125 : f32
    %v = arith.select %eq, %p, %n : f32
    linalg.yield %v : f32
  } -> tensor<128x64xf32>
  %e3 = tensor.empty() : tensor<64xf32>
  %b2 = linalg.generic {indexing_maps = [affine_map<(j) -> (j)>], iterator_types = ["parallel"]} outs(%e3 : tensor<64xf32>) {
  ^bb0(%o: f32):
    %j = linalg.index 0 : index
    %ji = arith.index_cast %j : index to i32
    %jf = arith.sitofp %ji : i32 to f32
    %c = arith.constant 0.015625 : f32
    %v = arith.mulf %jf, %c : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %e = tensor.empty() : tensor<16x64xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<16x64xf32>) -> tensor<16x64xf32>
  %m = linalg.matmul ins(%h, %w2 : tensor<16x128xf32>, tensor<128x64xf32>) outs(%f : tensor<16x64xf32>) -> tensor<16x64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%m, %b2 : tensor<16x64xf32>, tensor<64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %y = arith.maximumf %s, %z : f32
    linalg.yield %y : f32
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
