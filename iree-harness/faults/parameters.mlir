// The fault sweep's file-read program (sweep.py): a global whose value comes from a parameter
// archive (`--parameters=model=params.irpa`), which IREE reads from the file into device
// memory through the HAL's file queue operations, returned to the host. No dispatch, so plain
// iree-compile's gfx942 module runs on the software device.
util.global private @weight = #stream.parameter.named<"model"::"weight"> : tensor<4x8xf32>
func.func @read_weight() -> tensor<4x8xf32> {
  %w = util.global.load @weight : tensor<4x8xf32>
  return %w : tensor<4x8xf32>
}
