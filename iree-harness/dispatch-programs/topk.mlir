// Top-k (chlo.top_k, k = 3) along the last dimension: 1-D and 2-D, values and indices.
// IREE lowers it to iree_linalg_ext.topk, one row per workgroup.
// RUN: --function=topk_1d --input=64xf32
// RUN: --function=topk_2d --input=8x64xf32
func.func @topk_1d(%a: tensor<64xf32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %v, %i = chlo.top_k(%a, k = 3) : tensor<64xf32> -> (tensor<3xf32>, tensor<3xi32>)
  return %v, %i : tensor<3xf32>, tensor<3xi32>
}
func.func @topk_2d(%a: tensor<8x64xf32>) -> (tensor<8x3xf32>, tensor<8x3xi32>) {
  %v, %i = chlo.top_k(%a, k = 3) : tensor<8x64xf32> -> (tensor<8x3xf32>, tensor<8x3xi32>)
  return %v, %i : tensor<8x3xf32>, tensor<8x3xi32>
}
