// Math functions IREE lowers to AMDGPU intrinsics or ROCm's __ocml_* device library,
// on edge inputs (run.py's EDGE_VALUES: zeros, infinities, NaN, denormals, f32 and f16
// limits, near multiples of pi, exp's overflow and underflow, large arguments, near 1),
// compared element by element with the exact values (the function computed in float64 and
// rounded: NaN where it is NaN, infinities equal, f32 to 1e-4 relative): llvm-cpu's own
// approximations differ at several edges (run.py prints where). IREE's kernels keep f32
// denormals (no "denormal-fp-math-f32" attribute: the AMDGPU default, IEEE), as the exact
// values do. Two-argument functions get the edges rotated. (log10 is left out: llvm-cpu's
// embedded ELF has no log10f to link. bf16 results are compared by their bits: IREE's tools
// write no bf16 .npy.)
// RUN: --function=sin --input=64xf32:edges --exact=sin
// RUN: --function=cos --input=64xf32:edges --exact=cos
// RUN: --function=tan --input=64xf32:edges --exact=tan
// RUN: --function=exp --input=64xf32:edges --exact=exp
// RUN: --function=exp2 --input=64xf32:edges --exact=exp2
// RUN: --function=expm1 --input=64xf32:edges --exact=expm1
// RUN: --function=log --input=64xf32:edges --exact=log
// RUN: --function=log2 --input=64xf32:edges --exact=log2
// RUN: --function=log1p --input=64xf32:edges --exact=log1p
// RUN: --function=tanh --input=64xf32:edges --exact=tanh
// RUN: --function=erf --input=64xf32:edges --exact=erf
// RUN: --function=atan --input=64xf32:edges --exact=atan
// RUN: --function=sqrt --input=64xf32:edges --exact=sqrt
// RUN: --function=rsqrt --input=64xf32:edges --exact=rsqrt
// RUN: --function=cbrt --input=64xf32:edges --exact=cbrt
// RUN: --function=absf --input=64xf32:edges --exact=absf
// RUN: --function=floor --input=64xf32:edges --exact=floor
// RUN: --function=ceil --input=64xf32:edges --exact=ceil
// RUN: --function=roundeven --input=64xf32:edges --exact=roundeven
// RUN: --function=atan2 --input=64xf32:edges --input=64xf32:edges:7 --exact=atan2
// RUN: --function=powf --input=64xf32:edges --input=64xf32:edges:13 --exact=powf
// RUN: --function=exp_f16 --input=64xf16:edges --exact=exp
// RUN: --function=sin_f16 --input=64xf16:edges --exact=sin
// RUN: --function=f32_to_f16 --input=64xf32:edges --exact=convert
// RUN: --function=f16_to_f32 --input=64xf16:edges --exact=convert
// RUN: --function=f32_to_bf16_bits --input=64xf32:edges --exact=bf16_bits
func.func @sin(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.sin %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @cos(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.cos %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @tan(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.tan %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @exp(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.exp %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @exp2(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.exp2 %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @expm1(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.expm1 %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @log(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.log %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @log2(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.log2 %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @log1p(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.log1p %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @tanh(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.tanh %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @erf(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.erf %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @atan(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.atan %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @sqrt(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.sqrt %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @rsqrt(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.rsqrt %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @cbrt(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.cbrt %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @absf(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.absf %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @floor(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.floor %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @ceil(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.ceil %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @roundeven(%a0: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %o: f32):
    %v = math.roundeven %x0 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @atan2(%a0: tensor<64xf32>, %a1: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0, %a1 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %x1: f32, %o: f32):
    %v = math.atan2 %x0, %x1 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @powf(%a0: tensor<64xf32>, %a1: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0, %a1 : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f32, %x1: f32, %o: f32):
    %v = math.powf %x0, %x1 : f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @exp_f16(%a0: tensor<64xf16>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf16>) outs(%e : tensor<64xf16>) {
  ^bb0(%x0: f16, %o: f16):
    %v = math.exp %x0 : f16
    linalg.yield %v : f16
  } -> tensor<64xf16>
  return %r : tensor<64xf16>
}
func.func @sin_f16(%a0: tensor<64xf16>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf16>) outs(%e : tensor<64xf16>) {
  ^bb0(%x0: f16, %o: f16):
    %v = math.sin %x0 : f16
    linalg.yield %v : f16
  } -> tensor<64xf16>
  return %r : tensor<64xf16>
}
func.func @f32_to_f16(%a0: tensor<64xf32>) -> tensor<64xf16> {
  %e = tensor.empty() : tensor<64xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xf16>) {
  ^bb0(%x0: f32, %o: f16):
    %v = arith.truncf %x0 : f32 to f16
    linalg.yield %v : f16
  } -> tensor<64xf16>
  return %r : tensor<64xf16>
}
func.func @f16_to_f32(%a0: tensor<64xf16>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf16>) outs(%e : tensor<64xf32>) {
  ^bb0(%x0: f16, %o: f32):
    %v = arith.extf %x0 : f16 to f32
    linalg.yield %v : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @f32_to_bf16_bits(%a0: tensor<64xf32>) -> tensor<64xi16> {
  %e = tensor.empty() : tensor<64xi16>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a0 : tensor<64xf32>) outs(%e : tensor<64xi16>) {
  ^bb0(%x0: f32, %o: i16):
    %b = arith.truncf %x0 : f32 to bf16
    %v = arith.bitcast %b : bf16 to i16
    linalg.yield %v : i16
  } -> tensor<64xi16>
  return %r : tensor<64xi16>
}
