// Pooling NHWC: 2x2 stride-2 max pool, 3x3 stride-1 sum pool, a padded 3x3
// stride-2 max pool (pad with -inf), and an i32 max pool.
// RUN: --function=maxpool_2x2 --input=2x16x16x8xf32
// RUN: --function=sumpool_3x3 --input=1x16x16x16xf32
// RUN: --function=maxpool_pad --input=1x15x15x8xf32
// RUN: --function=maxpool_i32 --input=1x16x16x8xi32
func.func @maxpool_2x2(%x: tensor<2x16x16x8xf32>) -> tensor<2x8x8x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %k = tensor.empty() : tensor<2x2xf32>
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<2x16x16x8xf32>, tensor<2x2xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %r : tensor<2x8x8x8xf32>
}
func.func @sumpool_3x3(%x: tensor<1x16x16x16xf32>) -> tensor<1x14x14x16xf32> {
  %z = arith.constant 0.0 : f32
  %k = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x14x14x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  %r = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %k : tensor<1x16x16x16xf32>, tensor<3x3xf32>) outs(%f : tensor<1x14x14x16xf32>) -> tensor<1x14x14x16xf32>
  return %r : tensor<1x14x14x16xf32>
}
func.func @maxpool_pad(%x: tensor<1x15x15x8xf32>) -> tensor<1x8x8x8xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %ninf : f32
  } : tensor<1x15x15x8xf32> to tensor<1x17x17x8xf32>
  %k = tensor.empty() : tensor<3x3xf32>
  %e = tensor.empty() : tensor<1x8x8x8xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %k : tensor<1x17x17x8xf32>, tensor<3x3xf32>) outs(%f : tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  return %r : tensor<1x8x8x8xf32>
}
func.func @maxpool_i32(%x: tensor<1x16x16x8xi32>) -> tensor<1x8x8x8xi32> {
  %min = arith.constant -2147483648 : i32
  %k = tensor.empty() : tensor<2x2xi32>
  %e = tensor.empty() : tensor<1x8x8x8xi32>
  %f = linalg.fill ins(%min : i32) outs(%e : tensor<1x8x8x8xi32>) -> tensor<1x8x8x8xi32>
  %r = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %k : tensor<1x16x16x8xi32>, tensor<2x2xi32>) outs(%f : tensor<1x8x8x8xi32>) -> tensor<1x8x8x8xi32>
  return %r : tensor<1x8x8x8xi32>
}
