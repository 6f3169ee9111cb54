// Copies between arguments and new buffers: a contiguous slice, a concatenation and an
// in-place row update. The command buffer is recorded once (memoized at module
// initialization) with binding-table slots and executed with this call's buffers.
// EXPECT-IR: hal.command_buffer.copy_buffer
// EXPECT-IR: bindings(%c3)
// EXPECT-IR: hal.device.queue.execute.indirect
func.func @copies(%a: tensor<4x8xi32>, %b: tensor<2x8xi32>) -> (tensor<2x8xi32>, tensor<6x8xi32>, tensor<4x8xi32>) {
  %rows = tensor.extract_slice %a[1, 0] [2, 8] [1, 1] : tensor<4x8xi32> to tensor<2x8xi32>
  %stacked = tensor.concat dim(0) %a, %b : (tensor<4x8xi32>, tensor<2x8xi32>) -> tensor<6x8xi32>
  %updated = tensor.insert_slice %b into %a[2, 0] [2, 8] [1, 1] : tensor<2x8xi32> into tensor<4x8xi32>
  return %rows, %stacked, %updated : tensor<2x8xi32>, tensor<6x8xi32>, tensor<4x8xi32>
}
