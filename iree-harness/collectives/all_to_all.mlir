// stablehlo.all_to_all splitting and concatenating dimension 0 over one group of every
// rank (cross-replica: no channel handle; flow.collective.all_to_all: RCCL sends and
// receives grouped), per element type. A template (README.md, "Programs").
module @all_to_all attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
// FOR T IN f32 bf16 i8 i32
  // CASE: all_to_all_{{T}} {{RANKS*2}}x3x{{T}}:distinct -> all_to_all:split=0:concat=0
  func.func @all_to_all_{{T}}(%x : tensor<{{RANKS*2}}x3x{{T}}>) -> tensor<{{RANKS*2}}x3x{{T}}> {
    %out = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 0 : i64,
        split_count = {{RANKS}} : i64, replica_groups = {{GROUP}}} : (tensor<{{RANKS*2}}x3x{{T}}>) -> tensor<{{RANKS*2}}x3x{{T}}>
    return %out : tensor<{{RANKS*2}}x3x{{T}}>
  }
// END FOR
}
