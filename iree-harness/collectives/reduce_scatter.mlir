// stablehlo.reduce_scatter along dimension 0 (sum and maximum) over one group of every
// rank (flow.collective.reduce_scatter), per element type. A template (README.md).
module @reduce_scatter attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
// FOR T IN f32 bf16 f16 i32
  // CASE: reduce_scatter_{{T}} {{RANKS*2}}x3x{{T}}:small -> reduce_scatter:sum:dim=0 reduce_scatter:max:dim=0
  func.func @reduce_scatter_{{T}}(%x : tensor<{{RANKS*2}}x3x{{T}}>) -> (tensor<2x3x{{T}}>, tensor<2x3x{{T}}>) {
    %sum = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.add %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {scatter_dimension = 0 : i64,
          channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<{{RANKS*2}}x3x{{T}}>) -> tensor<2x3x{{T}}>
    %max = "stablehlo.reduce_scatter"(%x) ({
      ^bb0(%a: tensor<{{T}}>, %b: tensor<{{T}}>):
        %r = stablehlo.maximum %a, %b : tensor<{{T}}>
        stablehlo.return %r : tensor<{{T}}>
      }) {scatter_dimension = 0 : i64,
          channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<{{RANKS*2}}x3x{{T}}>) -> tensor<2x3x{{T}}>
    return %sum, %max : tensor<2x3x{{T}}>, tensor<2x3x{{T}}>
  }
// END FOR
}
