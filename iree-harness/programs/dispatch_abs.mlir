// A program WITH a dispatch (an elementwise kernel compiled for gfx942). The software
// HIP device cannot load AMDGPU code objects, so through it this must fail with a clear
// error naming the executable, never crash or hang (expect_dispatch_error.sh).
func.func @abs(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.absf %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
