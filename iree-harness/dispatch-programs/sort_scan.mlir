// Sort (iree_linalg_ext.sort) along the last axis: f32 values, and f32 keys
// carrying their i32 positions; cumulative sums (iree_linalg_ext.scan),
// inclusive in i32 (the exclusive f32 scan is scan_lockstep.mlir).
// Without buffer instructions: iree-compile 3.3.0 itself crashes for gfx942 on
// iree_linalg_ext.scan in LLVM's AMDGPULowerBufferFatPointers (visitICmpInst).
// COMPILE-FLAGS: --iree-rocdl-enable-buffer-instructions=false
// RUN: --function=sort_f32 --input=16x64xf32
// RUN: --function=sort_desc_with_index --input=8x128xf32
// RUN: --function=sort_1d_i32 --input=1000xi32
// RUN: --function=cumsum_i32 --input=16x64xi32
func.func @sort_f32(%a: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %r = iree_linalg_ext.sort dimension(1) outs(%a : tensor<16x64xf32>) {
  ^bb0(%x: f32, %y: f32):
    %c = arith.cmpf olt, %x, %y : f32
    iree_linalg_ext.yield %c : i1
  } -> tensor<16x64xf32>
  return %r : tensor<16x64xf32>
}
func.func @sort_desc_with_index(%a: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<8x128xi32>) {
  %e = tensor.empty() : tensor<8x128xi32>
  %iota = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<8x128xi32>) {
  ^bb0(%o: i32):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    linalg.yield %ji : i32
  } -> tensor<8x128xi32>
  %r:2 = iree_linalg_ext.sort dimension(1) outs(%a, %iota : tensor<8x128xf32>, tensor<8x128xi32>) {
  ^bb0(%x: f32, %y: f32, %xi: i32, %yi: i32):
    %c = arith.cmpf ogt, %x, %y : f32
    iree_linalg_ext.yield %c : i1
  } -> tensor<8x128xf32>, tensor<8x128xi32>
  return %r#0, %r#1 : tensor<8x128xf32>, tensor<8x128xi32>
}
func.func @sort_1d_i32(%a: tensor<1000xi32>) -> tensor<1000xi32> {
  %r = iree_linalg_ext.sort dimension(0) outs(%a : tensor<1000xi32>) {
  ^bb0(%x: i32, %y: i32):
    %c = arith.cmpi slt, %x, %y : i32
    iree_linalg_ext.yield %c : i1
  } -> tensor<1000xi32>
  return %r : tensor<1000xi32>
}
func.func @cumsum_i32(%a: tensor<16x64xi32>) -> (tensor<16x64xi32>, tensor<16xi32>) {
  %z = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x64xi32>
  %e1 = tensor.empty() : tensor<16xi32>
  %acc = linalg.fill ins(%z : i32) outs(%e1 : tensor<16xi32>) -> tensor<16xi32>
  %r:2 = iree_linalg_ext.scan dimension(1) inclusive(true) ins(%a : tensor<16x64xi32>) outs(%e, %acc : tensor<16x64xi32>, tensor<16xi32>) {
  ^bb0(%x: i32, %y: i32):
    %s = arith.addi %x, %y : i32
    iree_linalg_ext.yield %s : i32
  } -> tensor<16x64xi32>, tensor<16xi32>
  return %r#0, %r#1 : tensor<16x64xi32>, tensor<16xi32>
}

