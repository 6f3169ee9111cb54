// No dispatch: a constant result, uploaded from the module's read-only data.
func.func @constant() -> tensor<16xf32> {
  %c = arith.constant dense<3.5> : tensor<16xf32>
  return %c : tensor<16xf32>
}
