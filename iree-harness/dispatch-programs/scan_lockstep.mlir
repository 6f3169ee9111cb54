// An exclusive f32 scan (iree_linalg_ext.scan) for which IREE 3.3.0 emits a kernel whose
// 128 lanes share an LDS accumulator that lanes 0..31 initialise with no barrier before
// every lane redoes the whole scan in place: correct because lockstep lanes act as one
// (and racy between the two waves even on a GPU). softhip-iree-compile runs the uniform
// scan on one lane after the others have initialised the accumulator.
// COMPILE-FLAGS: --iree-rocdl-enable-buffer-instructions=false
// RUN: --function=cumsum_excl_f32 --input=32x128xf32
func.func @cumsum_excl_f32(%a: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<32x128xf32>
  %e1 = tensor.empty() : tensor<32xf32>
  %acc = linalg.fill ins(%z : f32) outs(%e1 : tensor<32xf32>) -> tensor<32xf32>
  %r:2 = iree_linalg_ext.scan dimension(1) inclusive(false) ins(%a : tensor<32x128xf32>) outs(%e, %acc : tensor<32x128xf32>, tensor<32xf32>) {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    iree_linalg_ext.yield %s : f32
  } -> tensor<32x128xf32>, tensor<32xf32>
  return %r#0 : tensor<32x128xf32>
}
