// Scaled dot-product attention, small: iree_linalg_ext.attention (f16 and f32,
// Q 1x64x32, K/V 1x64x32, scale 1/sqrt(32)) and the same computed as
// batch_matmul(Q, K^T) * scale -> softmax -> batch_matmul(., V) in f32.
// RUN: --function=attention_f16 --input=1x64x32xf16 --input=1x64x32xf16 --input=1x64x32xf16
// RUN: --function=attention_f32 --input=2x64x32xf32 --input=2x64x32xf32 --input=2x64x32xf32
// RUN: --function=attention_explicit --input=2x64x32xf32 --input=2x64x32xf32 --input=2x64x32xf32
func.func @attention_f16(%q: tensor<1x64x32xf16>, %k: tensor<1x64x32xf16>, %v: tensor<1x64x32xf16>) -> tensor<1x64x32xf16> {
  %scale = arith.constant 0.1767766952966369 : f16
  %e = tensor.empty() : tensor<1x64x32xf16>
  %r = iree_linalg_ext.attention {indexing_maps = [affine_map<(b, m, k1, k2, n) -> (b, m, k1)>, affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>, affine_map<(b, m, k1, k2, n) -> (b, k2, n)>, affine_map<(b, m, k1, k2, n) -> ()>, affine_map<(b, m, k1, k2, n) -> (b, m, n)>]} ins(%q, %k, %v, %scale : tensor<1x64x32xf16>, tensor<1x64x32xf16>, tensor<1x64x32xf16>, f16) outs(%e : tensor<1x64x32xf16>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<1x64x32xf16>
  return %r : tensor<1x64x32xf16>
}
func.func @attention_f32(%q: tensor<2x64x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x32xf32>) -> tensor<2x64x32xf32> {
  %scale = arith.constant 0.1767766952966369 : f32
  %e = tensor.empty() : tensor<2x64x32xf32>
  %r = iree_linalg_ext.attention {indexing_maps = [affine_map<(b, m, k1, k2, n) -> (b, m, k1)>, affine_map<(b, m, k1, k2, n) -> (b, k2, k1)>, affine_map<(b, m, k1, k2, n) -> (b, k2, n)>, affine_map<(b, m, k1, k2, n) -> ()>, affine_map<(b, m, k1, k2, n) -> (b, m, n)>]} ins(%q, %k, %v, %scale : tensor<2x64x32xf32>, tensor<2x64x32xf32>, tensor<2x64x32xf32>, f32) outs(%e : tensor<2x64x32xf32>) {
  ^bb0(%s: f32):
    iree_linalg_ext.yield %s : f32
  } -> tensor<2x64x32xf32>
  return %r : tensor<2x64x32xf32>
}
func.func @attention_explicit(%q: tensor<2x64x32xf32>, %k: tensor<2x64x32xf32>, %v: tensor<2x64x32xf32>) -> tensor<2x64x32xf32> {
  %z = arith.constant 0.0 : f32
  %scale = arith.constant 0.1767766952966369 : f32
  %es = tensor.empty() : tensor<2x64x64xf32>
  %fs = linalg.fill ins(%z : f32) outs(%es : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, affine_map<(b, m, n, d) -> (b, n, d)>, affine_map<(b, m, n, d) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x64x32xf32>, tensor<2x64x32xf32>) outs(%fs : tensor<2x64x64xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %a = arith.addf %p, %acc : f32
    linalg.yield %a : f32
  } -> tensor<2x64x64xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(b, m, n) -> (b, m, n)>, affine_map<(b, m, n) -> (b, m, n)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s : tensor<2x64x64xf32>) outs(%es : tensor<2x64x64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<2x64x64xf32>
  %p = linalg.softmax dimension(2) ins(%ss : tensor<2x64x64xf32>) outs(%es : tensor<2x64x64xf32>) -> tensor<2x64x64xf32>
  %eo = tensor.empty() : tensor<2x64x32xf32>
  %fo = linalg.fill ins(%z : f32) outs(%eo : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  %r = linalg.batch_matmul ins(%p, %v : tensor<2x64x64xf32>, tensor<2x64x32xf32>) outs(%fo : tensor<2x64x32xf32>) -> tensor<2x64x32xf32>
  return %r : tensor<2x64x32xf32>
}
