// Collectives over several replica groups ({{HALVES}}: even and odd ranks, e.g.
// [[0, 2], [1, 3]]; IREE splits the default channel: ncclCommSplit) and the cross-replica
// mode (no channel handle, no use_global_device_ids). A template (README.md, "Programs").
module @groups attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
  // CASE: all_reduce_halves_f32 8xf32:small -> all_reduce:sum:groups=halves
  func.func @all_reduce_halves_f32(%x : tensor<8xf32>) -> tensor<8xf32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{HALVES}}, use_global_device_ids} : (tensor<8xf32>) -> tensor<8xf32>
    return %sum : tensor<8xf32>
  }

  // CASE: all_gather_halves_i32 2x3xi32:distinct -> all_gather:dim=0:groups=halves
  func.func @all_gather_halves_i32(%x : tensor<2x3xi32>) -> tensor<{{RANKS}}x3xi32> {
    %out = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = {{HALVES}}, use_global_device_ids} : (tensor<2x3xi32>) -> tensor<{{RANKS}}x3xi32>
    return %out : tensor<{{RANKS}}x3xi32>
  }

  // CASE: all_reduce_cross_replica_i32 8xi32:small -> all_reduce:sum
  func.func @all_reduce_cross_replica_i32(%x : tensor<8xi32>) -> tensor<8xi32> {
    %sum = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %r = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %r : tensor<i32>
      }) {replica_groups = {{GROUP}}} : (tensor<8xi32>) -> tensor<8xi32>
    return %sum : tensor<8xi32>
  }
}
