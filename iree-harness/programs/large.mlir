// Large inputs and outputs (cases/large.flags): a 2 MiB and a 1.2 MiB argument read from
// .npy files, a 3.2 MiB concatenation, a 1 MiB slice at an offset and an in-place update
// of the first argument's buffer; every result written to a .npy file and compared byte
// for byte with make_data.py's. Sizes the small programs never reach: host staging,
// pageable host memory read by asynchronous copies, buffers from other size classes.
// EXPECT-IR: hal.command_buffer.copy_buffer
// EXPECT-IR: length(%c2097152)
// EXPECT-IR: hal.device.queue.execute.indirect
func.func @large(%a: tensor<512x1024xi32>, %b: tensor<300x1024xi32>) -> (tensor<812x1024xi32>, tensor<256x1024xi32>, tensor<512x1024xi32>) {
  %stacked = tensor.concat dim(0) %a, %b : (tensor<512x1024xi32>, tensor<300x1024xi32>) -> tensor<812x1024xi32>
  %rows = tensor.extract_slice %a[100, 0] [256, 1024] [1, 1] : tensor<512x1024xi32> to tensor<256x1024xi32>
  %updated = tensor.insert_slice %b into %a[200, 0] [300, 1024] [1, 1] : tensor<300x1024xi32> into tensor<512x1024xi32>
  return %stacked, %rows, %updated : tensor<812x1024xi32>, tensor<256x1024xi32>, tensor<512x1024xi32>
}
