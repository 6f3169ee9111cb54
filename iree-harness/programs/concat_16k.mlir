// The program of the report that found IREE's C driver wrong on the software HIP device in
// stream mode (issue 11): two tensor<16384xi32> from .npy files, concatenated. Run by
// cases/concat_16k.flags and, 20 times in stream mode with IREE's C driver, by
// c_driver_stream_large_inputs.sh.
// EXPECT-IR: hal.command_buffer.copy_buffer
// EXPECT-IR: length(%c65536)
func.func @concat(%a: tensor<16384xi32>, %b: tensor<16384xi32>) -> tensor<32768xi32> {
  %c = tensor.concat dim(0) %a, %b : (tensor<16384xi32>, tensor<16384xi32>) -> tensor<32768xi32>
  return %c : tensor<32768xi32>
}
