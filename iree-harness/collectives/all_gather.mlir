// stablehlo.all_gather along dimension 0 over one group of every rank (flow.collective.
// all_gather, no dispatch), per element type. A template (README.md, "Programs").
module @all_gather attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
// FOR T IN f32 bf16 f16 i8 i32 i64
  // CASE: all_gather_{{T}} 2x3x{{T}}:distinct -> all_gather:dim=0
  func.func @all_gather_{{T}}(%x : tensor<2x3x{{T}}>) -> tensor<{{RANKS*2}}x3x{{T}}> {
    %out = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<2x3x{{T}}>) -> tensor<{{RANKS*2}}x3x{{T}}>
    return %out : tensor<{{RANKS*2}}x3x{{T}}>
  }
// END FOR
}
