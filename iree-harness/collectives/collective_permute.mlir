// stablehlo.collective_permute around the ring of ranks (rank r sends to r+1; IREE:
// flow.collective.send_recv, RCCL send and receive), per element type. A template.
module @collective_permute attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
// FOR T IN f32 bf16 f64 i32
  // CASE: collective_permute_{{T}} 8x{{T}}:distinct -> collective_permute:ring
  func.func @collective_permute_{{T}}(%x : tensor<8x{{T}}>) -> tensor<8x{{T}}> {
    %out = "stablehlo.collective_permute"(%x) {source_target_pairs = {{RING}},
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>} : (tensor<8x{{T}}>) -> tensor<8x{{T}}>
    return %out : tensor<8x{{T}}>
  }
// END FOR
}
