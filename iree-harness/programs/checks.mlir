// The same operations checked by IREE's check framework (run with iree-check-module):
// each function is one test; check.expect_* reads the device buffers back and compares.
// util.unfoldable_constant keeps the compiler from folding the work away.
// EXPECT-IR: hal.command_buffer.copy_buffer
// EXPECT-IR: hal.command_buffer.fill_buffer

func.func @slice_and_concat() {
  %a = util.unfoldable_constant dense<[1, 2, 3, 4, 5, 6, 7, 8]> : tensor<8xi32>
  %middle = tensor.extract_slice %a[2] [4] [1] : tensor<8xi32> to tensor<4xi32>
  check.expect_eq_const(%middle, dense<[3, 4, 5, 6]> : tensor<4xi32>) : tensor<4xi32>
  %joined = tensor.concat dim(0) %middle, %a : (tensor<4xi32>, tensor<8xi32>) -> tensor<12xi32>
  check.expect_eq_const(%joined, dense<[3, 4, 5, 6, 1, 2, 3, 4, 5, 6, 7, 8]> : tensor<12xi32>) : tensor<12xi32>
  return
}

func.func @fill_runtime_value() {
  %value = util.unfoldable_constant 7.5 : f32
  %empty = tensor.empty() : tensor<3x4xf32>
  %filled = linalg.fill ins(%value : f32) outs(%empty : tensor<3x4xf32>) -> tensor<3x4xf32>
  check.expect_almost_eq_const(%filled, dense<7.5> : tensor<3x4xf32>) : tensor<3x4xf32>
  return
}

func.func @insert_rows() {
  %table = util.unfoldable_constant dense<[[0, 0], [0, 0], [0, 0]]> : tensor<3x2xi16>
  %row = util.unfoldable_constant dense<[[9, -9]]> : tensor<1x2xi16>
  %updated = tensor.insert_slice %row into %table[1, 0] [1, 2] [1, 1] : tensor<1x2xi16> into tensor<3x2xi16>
  %expected = util.unfoldable_constant dense<[[0, 0], [9, -9], [0, 0]]> : tensor<3x2xi16>
  check.expect_eq(%updated, %expected) : tensor<3x2xi16>
  return
}
