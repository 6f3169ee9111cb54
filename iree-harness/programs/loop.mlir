// Reuse: the loop body is one memoized command buffer executed once per iteration with
// that iteration's buffers in its binding table, each iteration allocating its result
// and deallocating the previous one on the queue, with no host wait in between.
// EXPECT-IR: hal.device.queue.execute.indirect
// EXPECT-IR: hal.device.queue.dealloca
// EXPECT-IR: _memoize_apply

// Rotates the rows of %a up by one, %times times.
func.func @rotate_rows(%a: tensor<4x2xi32>, %times: i32) -> tensor<4x2xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.index_cast %times : i32 to index
  %result = scf.for %i = %c0 to %n step %c1 iter_args(%t = %a) -> tensor<4x2xi32> {
    %head = tensor.extract_slice %t[0, 0] [1, 2] [1, 1] : tensor<4x2xi32> to tensor<1x2xi32>
    %tail = tensor.extract_slice %t[1, 0] [3, 2] [1, 1] : tensor<4x2xi32> to tensor<3x2xi32>
    %next = tensor.concat dim(0) %tail, %head : (tensor<3x2xi32>, tensor<1x2xi32>) -> tensor<4x2xi32>
    scf.yield %next : tensor<4x2xi32>
  }
  return %result : tensor<4x2xi32>
}
