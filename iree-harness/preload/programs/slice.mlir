// No dispatch: rows 1..2 of the input, a buffer copy on the device.
func.func @slice(%a: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %s = tensor.extract_slice %a[1, 0] [2, 8] [1, 1] : tensor<4x8xf32> to tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
