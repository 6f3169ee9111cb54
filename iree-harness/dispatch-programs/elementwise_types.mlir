// Elementwise ops in every element type (integers compared exactly).
// bf16 results are widened to f32 in the kernel (numpy has no bf16 to write them as);
// f64 stays f64 (IREE demotes f64 to f32 unless told not to); no exp/tanh in f64:
// llvm-cpu's embedded ELF has no libm exp for the reference.
// COMPILE-FLAGS: --iree-input-demote-f64-to-f32=false
// RUN: --function=float_bf16 --input=256xbf16 --input=256xbf16 --tolerance=2e-2,2e-2
// RUN: --function=int_i8 --input=256xi8 --input=256xi8
// RUN: --function=int_i16 --input=256xi16 --input=256xi16
// RUN: --function=int_i32 --input=256xi32 --input=256xi32
// RUN: --function=int_i64 --input=256xi64 --input=256xi64
// RUN: --function=float_f16 --input=256xf16 --input=256xf16
// RUN: --function=float_f32 --input=256xf32 --input=256xf32
// RUN: --function=float_f64 --input=256xf64 --input=256xf64

func.func @int_i8(%a: tensor<256xi8>, %b: tensor<256xi8>) -> (tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>) {
  %e = tensor.empty() : tensor<256xi8>
  %r:7 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xi8>, tensor<256xi8>) outs(%e, %e, %e, %e, %e, %e, %e : tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>) {
  ^bb0(%x: i8, %y: i8, %o0: i8, %o1: i8, %o2: i8, %o3: i8, %o4: i8, %o5: i8, %o6: i8):
    %seven = arith.constant 7 : i8
    %add = arith.addi %x, %y : i8
    %mul = arith.muli %x, %y : i8
    %mx = arith.maxsi %x, %y : i8
    %mn = arith.minsi %x, %y : i8
    %sh = arith.andi %y, %seven : i8
    %shl = arith.shli %x, %sh : i8
    %shr = arith.shrsi %x, %sh : i8
    %shru = arith.shrui %x, %sh : i8
    %x2 = arith.xori %shl, %shru : i8
    %c = arith.cmpi slt, %x, %y : i8
    %sel = arith.select %c, %add, %mul : i8
    %sub = arith.subi %x, %y : i8
    %o = arith.ori %sub, %shr : i8
    linalg.yield %add, %mul, %mx, %mn, %x2, %sel, %o : i8, i8, i8, i8, i8, i8, i8
  } -> (tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6 : tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>, tensor<256xi8>
}

func.func @int_i16(%a: tensor<256xi16>, %b: tensor<256xi16>) -> (tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>) {
  %e = tensor.empty() : tensor<256xi16>
  %r:7 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xi16>, tensor<256xi16>) outs(%e, %e, %e, %e, %e, %e, %e : tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>) {
  ^bb0(%x: i16, %y: i16, %o0: i16, %o1: i16, %o2: i16, %o3: i16, %o4: i16, %o5: i16, %o6: i16):
    %seven = arith.constant 7 : i16
    %add = arith.addi %x, %y : i16
    %mul = arith.muli %x, %y : i16
    %mx = arith.maxsi %x, %y : i16
    %mn = arith.minsi %x, %y : i16
    %sh = arith.andi %y, %seven : i16
    %shl = arith.shli %x, %sh : i16
    %shr = arith.shrsi %x, %sh : i16
    %shru = arith.shrui %x, %sh : i16
    %x2 = arith.xori %shl, %shru : i16
    %c = arith.cmpi slt, %x, %y : i16
    %sel = arith.select %c, %add, %mul : i16
    %sub = arith.subi %x, %y : i16
    %o = arith.ori %sub, %shr : i16
    linalg.yield %add, %mul, %mx, %mn, %x2, %sel, %o : i16, i16, i16, i16, i16, i16, i16
  } -> (tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6 : tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>, tensor<256xi16>
}

func.func @int_i32(%a: tensor<256xi32>, %b: tensor<256xi32>) -> (tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>) {
  %e = tensor.empty() : tensor<256xi32>
  %r:7 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xi32>, tensor<256xi32>) outs(%e, %e, %e, %e, %e, %e, %e : tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>) {
  ^bb0(%x: i32, %y: i32, %o0: i32, %o1: i32, %o2: i32, %o3: i32, %o4: i32, %o5: i32, %o6: i32):
    %seven = arith.constant 7 : i32
    %add = arith.addi %x, %y : i32
    %mul = arith.muli %x, %y : i32
    %mx = arith.maxsi %x, %y : i32
    %mn = arith.minsi %x, %y : i32
    %sh = arith.andi %y, %seven : i32
    %shl = arith.shli %x, %sh : i32
    %shr = arith.shrsi %x, %sh : i32
    %shru = arith.shrui %x, %sh : i32
    %x2 = arith.xori %shl, %shru : i32
    %c = arith.cmpi slt, %x, %y : i32
    %sel = arith.select %c, %add, %mul : i32
    %sub = arith.subi %x, %y : i32
    %o = arith.ori %sub, %shr : i32
    linalg.yield %add, %mul, %mx, %mn, %x2, %sel, %o : i32, i32, i32, i32, i32, i32, i32
  } -> (tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6 : tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>, tensor<256xi32>
}

func.func @int_i64(%a: tensor<256xi64>, %b: tensor<256xi64>) -> (tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>) {
  %e = tensor.empty() : tensor<256xi64>
  %r:7 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xi64>, tensor<256xi64>) outs(%e, %e, %e, %e, %e, %e, %e : tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>) {
  ^bb0(%x: i64, %y: i64, %o0: i64, %o1: i64, %o2: i64, %o3: i64, %o4: i64, %o5: i64, %o6: i64):
    %seven = arith.constant 7 : i64
    %add = arith.addi %x, %y : i64
    %mul = arith.muli %x, %y : i64
    %mx = arith.maxsi %x, %y : i64
    %mn = arith.minsi %x, %y : i64
    %sh = arith.andi %y, %seven : i64
    %shl = arith.shli %x, %sh : i64
    %shr = arith.shrsi %x, %sh : i64
    %shru = arith.shrui %x, %sh : i64
    %x2 = arith.xori %shl, %shru : i64
    %c = arith.cmpi slt, %x, %y : i64
    %sel = arith.select %c, %add, %mul : i64
    %sub = arith.subi %x, %y : i64
    %o = arith.ori %sub, %shr : i64
    linalg.yield %add, %mul, %mx, %mn, %x2, %sel, %o : i64, i64, i64, i64, i64, i64, i64
  } -> (tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6 : tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>
}

func.func @float_f16(%a: tensor<256xf16>, %b: tensor<256xf16>) -> (tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>) {
  %e = tensor.empty() : tensor<256xf16>
  %r:8 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xf16>, tensor<256xf16>) outs(%e, %e, %e, %e, %e, %e, %e, %e : tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>) {
  ^bb0(%x: f16, %y: f16, %o0: f16, %o1: f16, %o2: f16, %o3: f16, %o4: f16, %o5: f16, %o6: f16, %o7: f16):
    %two = arith.constant 2.0 : f16
    %add = arith.addf %x, %y : f16
    %mul = arith.mulf %x, %y : f16
    %ay = math.absf %y : f16
    %den = arith.addf %ay, %two : f16
    %div = arith.divf %x, %den : f16
    %neg = arith.negf %x : f16
    %ax = math.absf %x : f16
    %sub = arith.subf %neg, %ax : f16
    %ex = math.exp %x : f16
    %th = math.tanh %y : f16
    %sq = math.sqrt %ax : f16
    %c = arith.cmpf olt, %x, %y : f16
    %mx = arith.maximumf %x, %y : f16
    %sel = arith.select %c, %mx, %sq : f16
    linalg.yield %add, %mul, %div, %sub, %ex, %th, %sq, %sel : f16, f16, f16, f16, f16, f16, f16, f16
  } -> (tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>, tensor<256xf16>
}

func.func @float_bf16(%a: tensor<256xbf16>, %b: tensor<256xbf16>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %e = tensor.empty() : tensor<256xf32>
  %r:8 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xbf16>, tensor<256xbf16>) outs(%e, %e, %e, %e, %e, %e, %e, %e : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  ^bb0(%x: bf16, %y: bf16, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32, %o6: f32, %o7: f32):
    %two = arith.constant 2.0 : bf16
    %add = arith.addf %x, %y : bf16
    %mul = arith.mulf %x, %y : bf16
    %ay = math.absf %y : bf16
    %den = arith.addf %ay, %two : bf16
    %div = arith.divf %x, %den : bf16
    %neg = arith.negf %x : bf16
    %ax = math.absf %x : bf16
    %sub = arith.subf %neg, %ax : bf16
    %ex = math.exp %x : bf16
    %th = math.tanh %y : bf16
    %sq = math.sqrt %ax : bf16
    %c = arith.cmpf olt, %x, %y : bf16
    %mx = arith.maximumf %x, %y : bf16
    %sel = arith.select %c, %mx, %sq : bf16
    %add_w = arith.extf %add : bf16 to f32
    %mul_w = arith.extf %mul : bf16 to f32
    %div_w = arith.extf %div : bf16 to f32
    %sub_w = arith.extf %sub : bf16 to f32
    %ex_w = arith.extf %ex : bf16 to f32
    %th_w = arith.extf %th : bf16 to f32
    %sq_w = arith.extf %sq : bf16 to f32
    %sel_w = arith.extf %sel : bf16 to f32
    linalg.yield %add_w, %mul_w, %div_w, %sub_w, %ex_w, %th_w, %sq_w, %sel_w : f32, f32, f32, f32, f32, f32, f32, f32
  } -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}

func.func @float_f32(%a: tensor<256xf32>, %b: tensor<256xf32>) -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  %e = tensor.empty() : tensor<256xf32>
  %r:8 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xf32>, tensor<256xf32>) outs(%e, %e, %e, %e, %e, %e, %e, %e : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>) {
  ^bb0(%x: f32, %y: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32, %o4: f32, %o5: f32, %o6: f32, %o7: f32):
    %two = arith.constant 2.0 : f32
    %add = arith.addf %x, %y : f32
    %mul = arith.mulf %x, %y : f32
    %ay = math.absf %y : f32
    %den = arith.addf %ay, %two : f32
    %div = arith.divf %x, %den : f32
    %neg = arith.negf %x : f32
    %ax = math.absf %x : f32
    %sub = arith.subf %neg, %ax : f32
    %ex = math.exp %x : f32
    %th = math.tanh %y : f32
    %sq = math.sqrt %ax : f32
    %c = arith.cmpf olt, %x, %y : f32
    %mx = arith.maximumf %x, %y : f32
    %sel = arith.select %c, %mx, %sq : f32
    linalg.yield %add, %mul, %div, %sub, %ex, %th, %sq, %sel : f32, f32, f32, f32, f32, f32, f32, f32
  } -> (tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>, tensor<256xf32>
}

func.func @float_f64(%a: tensor<256xf64>, %b: tensor<256xf64>) -> (tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>) {
  %e = tensor.empty() : tensor<256xf64>
  %r:8 = linalg.generic {indexing_maps = [affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>, affine_map<(d0)->(d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<256xf64>, tensor<256xf64>) outs(%e, %e, %e, %e, %e, %e, %e, %e : tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>) {
  ^bb0(%x: f64, %y: f64, %o0: f64, %o1: f64, %o2: f64, %o3: f64, %o4: f64, %o5: f64, %o6: f64, %o7: f64):
    %two = arith.constant 2.0 : f64
    %add = arith.addf %x, %y : f64
    %mul = arith.mulf %x, %y : f64
    %ay = math.absf %y : f64
    %den = arith.addf %ay, %two : f64
    %div = arith.divf %x, %den : f64
    %neg = arith.negf %x : f64
    %ax = math.absf %x : f64
    %sub = arith.subf %neg, %ax : f64
    %ex = arith.mulf %x, %x : f64
    %th = arith.minimumf %x, %y : f64
    %sq = math.sqrt %ax : f64
    %c = arith.cmpf olt, %x, %y : f64
    %mx = arith.maximumf %x, %y : f64
    %sel = arith.select %c, %mx, %sq : f64
    linalg.yield %add, %mul, %div, %sub, %ex, %th, %sq, %sel : f64, f64, f64, f64, f64, f64, f64, f64
  } -> (tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>)
  return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7 : tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>, tensor<256xf64>
}
