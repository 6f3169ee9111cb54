// StableHLO math whose IREE 3.13 kernels carry decimal constants LLVM 21 cannot read as
// printed (expm1's polynomial, batch norm's epsilon): expm1, log1p, batch_norm_inference
// and normal sampling (stablehlo.rng NORMAL, IREE's fixed generator: the same numbers).
// RUN: --function=expm1 --input=256xf32 --tolerance=1e-4,1e-6
// RUN: --function=log1p --input=256xf32 --tolerance=1e-4,1e-6
// RUN: --function=batch_norm --input=4x8x8x16xf32 --input=16xf32 --input=16xf32 --input=16xf32 --input=16xf32 --tolerance=1e-4,1e-4
// RUN: --function=rng_normal --input=f32 --input=f32 --tolerance=1e-4,1e-5
func.func @expm1(%a: tensor<256xf32>) -> tensor<256xf32> {
  %r = stablehlo.exponential_minus_one %a : tensor<256xf32>
  return %r : tensor<256xf32>
}
func.func @log1p(%a: tensor<256xf32>) -> tensor<256xf32> {
  %r = stablehlo.log_plus_one %a : tensor<256xf32>
  return %r : tensor<256xf32>
}
func.func @batch_norm(%x: tensor<4x8x8x16xf32>, %s: tensor<16xf32>, %o: tensor<16xf32>, %m: tensor<16xf32>, %v: tensor<16xf32>) -> tensor<4x8x8x16xf32> {
  %va = stablehlo.abs %v : tensor<16xf32>
  %r = "stablehlo.batch_norm_inference"(%x, %s, %o, %m, %va) {epsilon = 1.0e-3 : f32, feature_index = 3 : i64} : (tensor<4x8x8x16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x8x8x16xf32>
  return %r : tensor<4x8x8x16xf32>
}
func.func @rng_normal(%mu: tensor<f32>, %sigma: tensor<f32>) -> tensor<256xf32> {
  %shape = stablehlo.constant dense<[256]> : tensor<1xi64>
  %r = stablehlo.rng %mu, %sigma, %shape, distribution = NORMAL : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<256xf32>
  return %r : tensor<256xf32>
}
