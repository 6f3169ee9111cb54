// stablehlo.all_reduce with each reduction IREE lowers (add, multiply, minimum, maximum:
// flow.collective.all_reduce sum/product/minimum/maximum) over one group of every rank,
// in every collective element type (README.md, "Programs"). A template: run.py fills in
// {{RANKS}}, {{GROUP}} and repeats each FOR block per element type {{T}}.
// Each function has a CASE line: its inputs (SHAPExTYPE:VALUES) and its references (run.py).
module @all_reduce attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
// FOR T IN f32 bf16 f16 f64 i8 ui8 i32 ui32 i64 ui64
  // CASE: all_reduce_{{T}} 8x{{T}}:small -> all_reduce:sum all_reduce:product all_reduce:min all_reduce:max
  func.func @all_reduce_{{T}}(%x : tensor<8x{{T}}>) -> (tensor<8x{{T}}>, tensor<8x{{T}}>, tensor<8x{{T}}>, tensor<8x{{T}}>) {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.add %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8x{{T}}>) -> tensor<8x{{T}}>
    %product = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.multiply %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8x{{T}}>) -> tensor<8x{{T}}>
    %min = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.minimum %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8x{{T}}>) -> tensor<8x{{T}}>
    %max = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.maximum %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {channel_handle = #stablehlo.channel_handle<handle = 4, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8x{{T}}>) -> tensor<8x{{T}}>
    return %sum, %product, %min, %max : tensor<8x{{T}}>, tensor<8x{{T}}>, tensor<8x{{T}}>, tensor<8x{{T}}>
  }
// END FOR

  // 16-bit integers: RCCL has no type for them; both drivers refuse (UNIMPLEMENTED).
  // CASE: all_reduce_i16 8xi16:small -> all_reduce:sum
  func.func @all_reduce_i16(%x : tensor<8xi16>) -> tensor<8xi16> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i16>, %b: tensor<i16>):
        %r = stablehlo.add %a, %b : tensor<i16>
        stablehlo.return %r : tensor<i16>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8xi16>) -> tensor<8xi16>
    return %sum : tensor<8xi16>
  }

  // bf16 sums that must round: 256 + 4i (rank 0) plus 1.5 + i/4 (rank 1), zeros elsewhere;
  // bf16 keeps 8 significant bits, so 257.5 becomes 258.
  // CASE: all_reduce_bf16_rounding 8xbf16:bf16_rounding -> all_reduce:sum
  func.func @all_reduce_bf16_rounding(%x : tensor<8xbf16>) -> tensor<8xbf16> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<bf16>, %b: tensor<bf16>):
        %r = stablehlo.add %a, %b : tensor<bf16>
        stablehlo.return %r : tensor<bf16>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8xbf16>) -> tensor<8xbf16>
    return %sum : tensor<8xbf16>
  }

  // Signed minimum and maximum of negative i32 values. IREE 3.3.0's StableHLO input lowers
  // a signless iN collective to the unsigned element type (ui32 here), so every driver
  // compares them as unsigned: a compiler difference from StableHLO, recorded in README.md.
  // CASE: all_reduce_i32_signed_min_max 8xi32:signed -> all_reduce:min all_reduce:max
  func.func @all_reduce_i32_signed_min_max(%x : tensor<8xi32>) -> (tensor<8xi32>, tensor<8xi32>) {
    %min = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %r = stablehlo.minimum %a, %b : tensor<i32>
        stablehlo.return %r : tensor<i32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8xi32>) -> tensor<8xi32>
    %max = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %r = stablehlo.maximum %a, %b : tensor<i32>
        stablehlo.return %r : tensor<i32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<8xi32>) -> tensor<8xi32>
    return %min, %max : tensor<8xi32>, tensor<8xi32>
  }
}
