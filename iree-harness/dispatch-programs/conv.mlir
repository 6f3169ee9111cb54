// 2-D convolutions, small: NHWC/HWCF padded (tensor.pad) and strided, NHWC
// unpadded with dilation, NCHW/FCHW, depthwise NHWC/HWC, and an i8 -> i32
// NHWC conv.
// RUN: --function=conv_nhwc_pad_stride --input=2x16x16x8xf32 --input=3x3x8x16xf32
// RUN: --function=conv_nhwc_dilated --input=1x18x18x4xf32 --input=3x3x4x8xf32
// RUN: --function=conv_nchw --input=1x8x16x16xf32 --input=16x8x3x3xf32
// RUN: --function=conv_depthwise --input=1x16x16x32xf32 --input=3x3x32xf32
// RUN: --function=conv_nhwc_i8 --input=1x12x12x16xi8 --input=3x3x16x16xi8
func.func @conv_nhwc_pad_stride(%x: tensor<2x16x16x8xf32>, %w: tensor<3x3x8x16xf32>) -> tensor<2x8x8x16xf32> {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%a: index, %b: index, %c: index, %d: index):
    tensor.yield %z : f32
  } : tensor<2x16x16x8xf32> to tensor<2x18x18x8xf32>
  %e = tensor.empty() : tensor<2x8x8x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%p, %w : tensor<2x18x18x8xf32>, tensor<3x3x8x16xf32>) outs(%f : tensor<2x8x8x16xf32>) -> tensor<2x8x8x16xf32>
  return %r : tensor<2x8x8x16xf32>
}
func.func @conv_nhwc_dilated(%x: tensor<1x18x18x4xf32>, %w: tensor<3x3x4x8xf32>) -> tensor<1x14x14x8xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x8xf32>) -> tensor<1x14x14x8xf32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x18x18x4xf32>, tensor<3x3x4x8xf32>) outs(%f : tensor<1x14x14x8xf32>) -> tensor<1x14x14x8xf32>
  return %r : tensor<1x14x14x8xf32>
}
func.func @conv_nchw(%x: tensor<1x8x16x16xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x16x14x14xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x14x14xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  %r = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x8x16x16xf32>, tensor<16x8x3x3xf32>) outs(%f : tensor<1x16x14x14xf32>) -> tensor<1x16x14x14xf32>
  return %r : tensor<1x16x14x14xf32>
}
func.func @conv_depthwise(%x: tensor<1x16x16x32xf32>, %w: tensor<3x3x32xf32>) -> tensor<1x14x14x32xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x14x14x32xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  %r = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x16x16x32xf32>, tensor<3x3x32xf32>) outs(%f : tensor<1x14x14x32xf32>) -> tensor<1x14x14x32xf32>
  return %r : tensor<1x14x14x32xf32>
}
func.func @conv_nhwc_i8(%x: tensor<1x12x12x16xi8>, %w: tensor<3x3x16x16xi8>) -> tensor<1x10x10x16xi32> {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<1x10x10x16xi32>
  %f = linalg.fill ins(%z : i32) outs(%e : tensor<1x10x10x16xi32>) -> tensor<1x10x10x16xi32>
  %r = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x12x12x16xi8>, tensor<3x3x16x16xi8>) outs(%f : tensor<1x10x10x16xi32>) -> tensor<1x10x10x16xi32>
  return %r : tensor<1x10x10x16xi32>
}
