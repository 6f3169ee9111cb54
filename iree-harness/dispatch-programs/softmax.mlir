// Softmax over the last axis: linalg.softmax (IREE decomposes it) and the same
// written as explicit generics (max, exp-sum, divide), in f32 and f16.
// RUN: --function=softmax_named --input=64x128xf32
// RUN: --function=softmax_generic --input=32x256xf32
// RUN: --function=softmax_3d --input=16x64x32xf32
// RUN: --function=softmax_f16 --input=16x64x32xf16
func.func @softmax_named(%a: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.softmax dimension(1) ins(%a : tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}
func.func @softmax_generic(%a: tensor<32x256xf32>) -> tensor<32x256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %z = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<32xf32>
  %fm = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<32x256xf32>) outs(%fm : tensor<32xf32>) {
  ^bb0(%x: f32, %m: f32):
    %v = arith.maximumf %x, %m : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %fs = linalg.fill ins(%z : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]} ins(%a, %mx : tensor<32x256xf32>, tensor<32xf32>) outs(%fs : tensor<32xf32>) {
  ^bb0(%x: f32, %m: f32, %s: f32):
    %d = arith.subf %x, %m : f32
    %ex = math.exp %d : f32
    %v = arith.addf %ex, %s : f32
    linalg.yield %v : f32
  } -> tensor<32xf32>
  %e2 = tensor.empty() : tensor<32x256xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%a, %mx, %sum : tensor<32x256xf32>, tensor<32xf32>, tensor<32xf32>) outs(%e2 : tensor<32x256xf32>) {
  ^bb0(%x: f32, %m: f32, %s: f32, %o: f32):
    %d = arith.subf %x, %m : f32
    %ex = math.exp %d : f32
    %v = arith.divf %ex, %s : f32
    linalg.yield %v : f32
  } -> tensor<32x256xf32>
  return %r : tensor<32x256xf32>
}
func.func @softmax_f16(%a: tensor<16x64x32xf16>) -> tensor<16x64x32xf16> {
  // Widened to f32 around linalg.softmax: an f16 linalg.softmax does not link
  // for the llvm-cpu reference (fmaxf is missing from its embedded ELF).
  %e = tensor.empty() : tensor<16x64x32xf32>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<16x64x32xf16>) outs(%e : tensor<16x64x32xf32>) {
  ^bb0(%x: f16, %o: f32):
    %v = arith.extf %x : f16 to f32
    linalg.yield %v : f32
  } -> tensor<16x64x32xf32>
  %s = linalg.softmax dimension(2) ins(%w : tensor<16x64x32xf32>) outs(%e : tensor<16x64x32xf32>) -> tensor<16x64x32xf32>
  %eh = tensor.empty() : tensor<16x64x32xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, j, k)>, affine_map<(i, j, k) -> (i, j, k)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<16x64x32xf32>) outs(%eh : tensor<16x64x32xf16>) {
  ^bb0(%x: f32, %o: f16):
    %v = arith.truncf %x : f32 to f16
    linalg.yield %v : f16
  } -> tensor<16x64x32xf16>
  return %r : tensor<16x64x32xf16>
}
func.func @softmax_3d(%a: tensor<16x64x32xf32>) -> tensor<16x64x32xf32> {
  %e = tensor.empty() : tensor<16x64x32xf32>
  %r = linalg.softmax dimension(2) ins(%a : tensor<16x64x32xf32>) outs(%e : tensor<16x64x32xf32>) -> tensor<16x64x32xf32>
  return %r : tensor<16x64x32xf32>
}
