// Layer norm over the last axis: mean, variance, (x - mean) * rsqrt(var + eps)
// * gamma + beta, as explicit generics (f32), and an f16 variant accumulating
// in f32.
// RUN: --function=layernorm --input=64x256xf32 --input=256xf32 --input=256xf32
// RUN: --function=layernorm_f16 --input=32x128xf16
func.func @layernorm(%a: tensor<64x256xf32>, %gamma: tensor<256xf32>, %beta: tensor<256xf32>) -> tensor<64x256xf32> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 256.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<64xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x256xf32>) outs(%f1 : tensor<64xf32>) {
  ^bb0(%x: f32, %s: f32):
    %v = arith.addf %x, %s : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %mean = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%sum : tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%s: f32, %o: f32):
    %v = arith.divf %s, %n : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %var_sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a, %mean : tensor<64x256xf32>, tensor<64xf32>) outs(%f1 : tensor<64xf32>) {
  ^bb0(%x: f32, %m: f32, %s: f32):
    %d = arith.subf %x, %m : f32
    %d2 = arith.mulf %d, %d : f32
    %v = arith.addf %d2, %s : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %mean, %var_sum, %gamma, %beta : tensor<64x256xf32>, tensor<64xf32>, tensor<64xf32>, tensor<256xf32>, tensor<256xf32>) outs(%e2 : tensor<64x256xf32>) {
  ^bb0(%x: f32, %m: f32, %vs: f32, %g: f32, %b: f32, %o: f32):
    %var = arith.divf %vs, %n : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %d = arith.subf %x, %m : f32
    %xn = arith.mulf %d, %rs : f32
    %xg = arith.mulf %xn, %g : f32
    %y = arith.addf %xg, %b : f32
    linalg.yield %y : f32
  } -> tensor<64x256xf32>
  return %r : tensor<64x256xf32>
}
func.func @layernorm_f16(%a: tensor<32x128xf16>) -> tensor<32x128xf16> {
  %z = arith.constant 0.0 : f32
  %n = arith.constant 128.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %stats:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<32x128xf16>) outs(%f1, %f1 : tensor<32xf32>, tensor<32xf32>) {
  ^bb0(%x: f16, %s: f32, %s2: f32):
    %xf = arith.extf %x : f16 to f32
    %v = arith.addf %xf, %s : f32
    %x2 = arith.mulf %xf, %xf : f32
    %v2 = arith.addf %x2, %s2 : f32
    linalg.yield %v, %v2 : f32, f32
  } -> (tensor<32xf32>, tensor<32xf32>)
  %e2 = tensor.empty() : tensor<32x128xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %stats#0, %stats#1 : tensor<32x128xf16>, tensor<32xf32>, tensor<32xf32>) outs(%e2 : tensor<32x128xf16>) {
  ^bb0(%x: f16, %s: f32, %s2: f32, %o: f16):
    %mean = arith.divf %s, %n : f32
    %m2 = arith.divf %s2, %n : f32
    %mm = arith.mulf %mean, %mean : f32
    %var = arith.subf %m2, %mm : f32
    %ve = arith.addf %var, %eps : f32
    %rs = math.rsqrt %ve : f32
    %xf = arith.extf %x : f16 to f32
    %d = arith.subf %xf, %mean : f32
    %y = arith.mulf %d, %rs : f32
    %yh = arith.truncf %y : f32 to f16
    linalg.yield %yh : f16
  } -> tensor<32x128xf16>
  return %r : tensor<32x128xf16>
}
