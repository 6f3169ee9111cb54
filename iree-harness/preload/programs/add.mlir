// One dispatch, compiled for llvm-cpu: runs on local-sync in the same tool as the HIP driver.
func.func @add(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %c = arith.addf %a, %b : tensor<4xf32>
  return %c : tensor<4xf32>
}
