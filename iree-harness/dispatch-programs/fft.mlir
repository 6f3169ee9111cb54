// A real FFT (stablehlo.fft, type RFFT): IREE lowers it to a DFT whose twiddle factors are
// cos/sin of computed angles, then real and imaginary parts.
// RUN: --function=rfft_1d --input=32xf32 --tolerance=1e-4,1e-4
// RUN: --function=rfft_2d --input=4x32xf32 --tolerance=1e-4,1e-4
func.func @rfft_1d(%a: tensor<32xf32>) -> (tensor<17xf32>, tensor<17xf32>) {
  %f = stablehlo.fft %a, type = RFFT, length = [32] : (tensor<32xf32>) -> tensor<17xcomplex<f32>>
  %r = stablehlo.real %f : (tensor<17xcomplex<f32>>) -> tensor<17xf32>
  %i = stablehlo.imag %f : (tensor<17xcomplex<f32>>) -> tensor<17xf32>
  return %r, %i : tensor<17xf32>, tensor<17xf32>
}
func.func @rfft_2d(%a: tensor<4x32xf32>) -> (tensor<4x17xf32>, tensor<4x17xf32>) {
  %f = stablehlo.fft %a, type = RFFT, length = [32] : (tensor<4x32xf32>) -> tensor<4x17xcomplex<f32>>
  %r = stablehlo.real %f : (tensor<4x17xcomplex<f32>>) -> tensor<4x17xf32>
  %i = stablehlo.imag %f : (tensor<4x17xcomplex<f32>>) -> tensor<4x17xf32>
  return %r, %i : tensor<4x17xf32>, tensor<4x17xf32>
}
