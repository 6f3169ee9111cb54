// A small CNN, f32, NHWC: conv 3x3 (4 -> 8 channels, padded) + bias + relu,
// 2x2 max pool, conv 3x3 (8 -> 16, unpadded) + relu, flatten, dense (-> 10)
// + bias, and a softmax over the 10 classes. Weights come in as inputs.
// RUN: --function=cnn --input=2x16x16x4xf32 --input=3x3x4x8xf32 --input=8xf32 --input=3x3x8x16xf32 --input=576x10xf32 --input=10xf32
func.func @cnn(%x: tensor<2x16x16x4xf32>, %w1: tensor<3x3x4x8xf32>, %b1: tensor<8xf32>, %w2: tensor<3x3x8x16xf32>, %wd: tensor<576x10xf32>, %bd: tensor<10xf32>) -> tensor<2x10xf32> {
  %z = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<2x16x16x4xf32> to tensor<2x18x18x4xf32>
  %e1 = tensor.empty() : tensor<2x16x16x8xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<2x16x16x8xf32>) -> tensor<2x16x16x8xf32>
  %c1 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%p, %w1 : tensor<2x18x18x4xf32>, tensor<3x3x4x8xf32>) outs(%f1 : tensor<2x16x16x8xf32>) -> tensor<2x16x16x8xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1, %b1 : tensor<2x16x16x8xf32>, tensor<8xf32>) outs(%e1 : tensor<2x16x16x8xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    %y = arith.maximumf %s, %z : f32
    linalg.yield %y : f32
  } -> tensor<2x16x16x8xf32>
  %k = tensor.empty() : tensor<2x2xf32>
  %ep = tensor.empty() : tensor<2x8x8x8xf32>
  %fp = linalg.fill ins(%ninf : f32) outs(%ep : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %pool = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%r1, %k : tensor<2x16x16x8xf32>, tensor<2x2xf32>) outs(%fp : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %e2 = tensor.empty() : tensor<2x6x6x16xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e2 : tensor<2x6x6x16xf32>) -> tensor<2x6x6x16xf32>
  %c2 = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%pool, %w2 : tensor<2x8x8x8xf32>, tensor<3x3x8x16xf32>) outs(%f2 : tensor<2x6x6x16xf32>) -> tensor<2x6x6x16xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(n, h, w, c) -> (n, h, w, c)>, affine_map<(n, h, w, c) -> (n, h, w, c)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2 : tensor<2x6x6x16xf32>) outs(%e2 : tensor<2x6x6x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %y = arith.maximumf %v, %z : f32
    linalg.yield %y : f32
  } -> tensor<2x6x6x16xf32>
  // dense over the flattened (h, w, c) features, as one contraction (a
  // collapse_shape + matmul here trips llvm-cpu's workgroup distribution).
  %wd4 = tensor.expand_shape %wd [[0, 1, 2], [3]] output_shape [6, 6, 16, 10] : tensor<576x10xf32> into tensor<6x6x16x10xf32>
  %ed = tensor.empty() : tensor<2x10xf32>
  %fd = linalg.fill ins(%z : f32) outs(%ed : tensor<2x10xf32>) -> tensor<2x10xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(n, o, h, w, c) -> (n, h, w, c)>, affine_map<(n, o, h, w, c) -> (h, w, c, o)>, affine_map<(n, o, h, w, c) -> (n, o)>], iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%r2, %wd4 : tensor<2x6x6x16xf32>, tensor<6x6x16x10xf32>) outs(%fd : tensor<2x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %db = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%d, %bd : tensor<2x10xf32>, tensor<10xf32>) outs(%ed : tensor<2x10xf32>) {
  ^bb0(%v: f32, %bias: f32, %o: f32):
    %s = arith.addf %v, %bias : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %sm = linalg.softmax dimension(1) ins(%db : tensor<2x10xf32>) outs(%ed : tensor<2x10xf32>) -> tensor<2x10xf32>
  return %sm : tensor<2x10xf32>
}
