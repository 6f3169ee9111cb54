// Gather: rows of a table picked by an index tensor (tensor.extract inside a
// linalg.generic); indices come in from [-8, 8) and are mapped into range.
// Scatter: iree_linalg_ext.scatter, adding i32 updates at input-derived
// (repeating) rows, and overwriting f32 rows at unique computed rows.
// RUN: --function=gather_rows --input=64x32xf32 --input=48xi32
// RUN: --function=gather_elems --input=16x64xi32 --input=16x40xi32
// RUN: --function=scatter_add_i32 --input=64x16xi32 --input=24x16xi32 --input=24xi32
// RUN: --function=scatter_set_f32 --input=64x32xf32 --input=16x32xf32
func.func @gather_rows(%table: tensor<64x32xf32>, %idx: tensor<48xi32>) -> tensor<48x32xf32> {
  %e = tensor.empty() : tensor<48x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<48xi32>) outs(%e : tensor<48x32xf32>) {
  ^bb0(%k: i32, %o: f32):
    // row = ((k + 8) * 7 + i) mod 64, in [0, 64)
    %c8 = arith.constant 8 : i32
    %c7 = arith.constant 7 : i32
    %c64 = arith.constant 64 : i32
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %k8 = arith.addi %k, %c8 : i32
    %k7 = arith.muli %k8, %c7 : i32
    %ks = arith.addi %k7, %ii : i32
    %row = arith.remui %ks, %c64 : i32
    %rowi = arith.index_cast %row : i32 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%rowi, %j] : tensor<64x32xf32>
    linalg.yield %v : f32
  } -> tensor<48x32xf32>
  return %r : tensor<48x32xf32>
}
func.func @gather_elems(%src: tensor<16x64xi32>, %idx: tensor<16x40xi32>) -> tensor<16x40xi32> {
  // take_along_axis on axis 1 with index |k| * 4 + (j mod 4)
  %e = tensor.empty() : tensor<16x40xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<16x40xi32>) outs(%e : tensor<16x40xi32>) {
  ^bb0(%k: i32, %o: i32):
    %c4 = arith.constant 4 : i32
    %a = math.absi %k : i32
    %a4 = arith.muli %a, %c4 : i32
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i32
    %jm = arith.remui %ji, %c4 : i32
    %col = arith.addi %a4, %jm : i32
    %coli = arith.index_cast %col : i32 to index
    %v = tensor.extract %src[%i, %coli] : tensor<16x64xi32>
    linalg.yield %v : i32
  } -> tensor<16x40xi32>
  return %r : tensor<16x40xi32>
}
func.func @scatter_add_i32(%orig: tensor<64x16xi32>, %upd: tensor<24x16xi32>, %idx: tensor<24xi32>) -> tensor<64x16xi32> {
  // rows (k + 8) * 3 in [0, 48): repeats, combined by addition (exact in i32)
  %e = tensor.empty() : tensor<24x1xi32>
  %rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%idx : tensor<24xi32>) outs(%e : tensor<24x1xi32>) {
  ^bb0(%k: i32, %o: i32):
    %c8 = arith.constant 8 : i32
    %c3 = arith.constant 3 : i32
    %k8 = arith.addi %k, %c8 : i32
    %r = arith.muli %k8, %c3 : i32
    linalg.yield %r : i32
  } -> tensor<24x1xi32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%upd, %rows : tensor<24x16xi32>, tensor<24x1xi32>) outs(%orig : tensor<64x16xi32>) {
  ^bb0(%u: i32, %o: i32):
    %s = arith.addi %o, %u : i32
    iree_linalg_ext.yield %s : i32
  } -> tensor<64x16xi32>
  return %r : tensor<64x16xi32>
}
func.func @scatter_set_f32(%orig: tensor<64x32xf32>, %upd: tensor<16x32xf32>) -> tensor<64x32xf32> {
  // unique rows (5 * i + 3) mod 64
  %e = tensor.empty() : tensor<16x1xi32>
  %rows = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<16x1xi32>) {
  ^bb0(%o: i32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %c5 = arith.constant 5 : i32
    %c3 = arith.constant 3 : i32
    %c64 = arith.constant 64 : i32
    %a = arith.muli %ii, %c5 : i32
    %b = arith.addi %a, %c3 : i32
    %r = arith.remui %b, %c64 : i32
    linalg.yield %r : i32
  } -> tensor<16x1xi32>
  %r = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%upd, %rows : tensor<16x32xf32>, tensor<16x1xi32>) outs(%orig : tensor<64x32xf32>) {
  ^bb0(%u: f32, %o: f32):
    iree_linalg_ext.yield %u : f32
  } -> tensor<64x32xf32>
  return %r : tensor<64x32xf32>
}
