// Updates at runtime offsets, runtime-sized slices, and constant data uploaded at module
// initialization (imported host memory or a queue read from a memory file).
// EXPECT-IR: hal.ex.file.from_memory
// EXPECT-IR: hal.device.queue.read
// EXPECT-IR: hal.device.queue.execute.indirect

// Writes the two rows of %rows into %table starting at row %at.
func.func @update_rows(%table: tensor<6x3xi32>, %rows: tensor<2x3xi32>, %at: i32) -> tensor<6x3xi32> {
  %row = arith.index_cast %at : i32 to index
  %updated = tensor.insert_slice %rows into %table[%row, 0] [2, 3] [1, 1] : tensor<2x3xi32> into tensor<6x3xi32>
  return %updated : tensor<6x3xi32>
}

// Puts %a between two constant vectors.
func.func @between_constants(%a: tensor<4xi32>) -> tensor<12xi32> {
  %before = arith.constant dense<[10, 20, 30, 40]> : tensor<4xi32>
  %after = arith.constant dense<[-1, -2, -3, -4]> : tensor<4xi32>
  %joined = tensor.concat dim(0) %before, %a, %after : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<12xi32>
  return %joined : tensor<12xi32>
}

// The %length elements of %a from %offset, and that slice twice over: sizes known only
// at runtime, so the queue allocations are sized at runtime too.
func.func @dynamic_slice(%a: tensor<?xi32>, %offset: i32, %length: i32) -> (tensor<?xi32>, tensor<?xi32>) {
  %o = arith.index_cast %offset : i32 to index
  %n = arith.index_cast %length : i32 to index
  %slice = tensor.extract_slice %a[%o] [%n] [1] : tensor<?xi32> to tensor<?xi32>
  %twice = tensor.concat dim(0) %slice, %slice : (tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
  return %slice, %twice : tensor<?xi32>, tensor<?xi32>
}
