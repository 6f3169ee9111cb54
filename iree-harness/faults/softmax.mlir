// The soak's dispatch program (soak.py): one softmax over four rows, compiled for gfx942 by
// softhip-iree-compile. Small, so 20,000 calls take seconds on the software HIP device.
func.func @softmax(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %empty = tensor.empty() : tensor<4x64xf32>
  %0 = linalg.softmax dimension(1) ins(%x : tensor<4x64xf32>) outs(%empty : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}
