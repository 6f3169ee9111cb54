// Elementwise f32: add (a dispatch with no synchronisation: a plain loop over lanes).
// RUN: --function=add --input=1000xf32 --input=1000xf32
func.func @add(%a: tensor<1000xf32>, %b: tensor<1000xf32>) -> tensor<1000xf32> {
  %e = tensor.empty() : tensor<1000xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<1000xf32>, tensor<1000xf32>) outs(%e : tensor<1000xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}
