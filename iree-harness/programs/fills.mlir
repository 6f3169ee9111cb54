// Fills: splats of a runtime value (static and runtime sizes) and of constants with
// 1-, 2- and 4-byte patterns, all into one stream-ordered (queue) allocation.
// EXPECT-IR: hal.device.queue.alloca
// EXPECT-IR: hal.command_buffer.fill_buffer
// EXPECT-IR: pattern(%c-2_i16 : i16)
func.func @splats(%value: f32, %count: i32) -> (tensor<1000xf32>, tensor<?xf32>, tensor<37xi8>, tensor<3x5xi16>, tensor<2x2xi32>) {
  %empty = tensor.empty() : tensor<1000xf32>
  %static_fill = linalg.fill ins(%value : f32) outs(%empty : tensor<1000xf32>) -> tensor<1000xf32>
  %n = arith.index_cast %count : i32 to index
  %empty_dynamic = tensor.empty(%n) : tensor<?xf32>
  %dynamic_fill = linalg.fill ins(%value : f32) outs(%empty_dynamic : tensor<?xf32>) -> tensor<?xf32>
  %bytes = arith.constant dense<-3> : tensor<37xi8>
  %halves = arith.constant dense<-2> : tensor<3x5xi16>
  %words = arith.constant dense<123456789> : tensor<2x2xi32>
  return %static_fill, %dynamic_fill, %bytes, %halves, %words : tensor<1000xf32>, tensor<?xf32>, tensor<37xi8>, tensor<3x5xi16>, tensor<2x2xi32>
}
