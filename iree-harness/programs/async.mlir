// Asynchronous execution: compiled with the async-external execution model, so the
// exported function takes a wait fence and a signal fence (IREE's coarse-fences ABI)
// that the tool creates and waits on; all work is ordered by semaphores.
// COMPILE-FLAGS: --iree-execution-model=async-external
// EXPECT-IR: coarse-fences
// EXPECT-IR: hal.device.queue.alloca
// EXPECT-IR: hal.device.queue.execute

func.func @interleave(%a: tensor<8xf32>, %b: tensor<8xf32>) -> (tensor<16xf32>, tensor<3xf32>, tensor<5xf32>) {
  %joined = tensor.concat dim(0) %b, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %middle = tensor.extract_slice %a[2] [3] [1] : tensor<8xf32> to tensor<3xf32>
  %fill_value = arith.constant 0.25 : f32
  %empty = tensor.empty() : tensor<5xf32>
  %filled = linalg.fill ins(%fill_value : f32) outs(%empty : tensor<5xf32>) -> tensor<5xf32>
  return %joined, %middle, %filled : tensor<16xf32>, tensor<3xf32>, tensor<5xf32>
}
