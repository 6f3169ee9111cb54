// Collectives next to dispatches (compiled by tools/softhip-iree-compile so the software
// device runs the kernels): all_gather and all_to_all along dimension 1 (IREE transposes
// around the collective), and arithmetic before and after an all_reduce.
// A template (README.md, "Programs").
// COMPILER: softhip-iree-compile
// (An unnamed module: softhip-iree-compile finds the kernels of a module named `module`.)
module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = {{RANKS}} : i32} {
  // CASE: all_gather_dim1_f32 3x2xf32:distinct -> all_gather:dim=1
  func.func @all_gather_dim1_f32(%x : tensor<3x2xf32>) -> tensor<3x{{RANKS*2}}xf32> {
    %out = "stablehlo.all_gather"(%x) {all_gather_dim = 1 : i64,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<3x2xf32>) -> tensor<3x{{RANKS*2}}xf32>
    return %out : tensor<3x{{RANKS*2}}xf32>
  }

  // (IREE 3.3.0 cannot compile an all_to_all whose split and concat dimensions differ: the
  // stablehlo.reshape its lowering makes is left illegal.)
  // CASE: all_to_all_dim1_f32 3x{{RANKS*2}}xf32:distinct -> all_to_all:split=1:concat=1
  func.func @all_to_all_dim1_f32(%x : tensor<3x{{RANKS*2}}xf32>) -> tensor<3x{{RANKS*2}}xf32> {
    %out = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 1 : i64,
        split_count = {{RANKS}} : i64, replica_groups = {{GROUP}}} : (tensor<3x{{RANKS*2}}xf32>) -> tensor<3x{{RANKS*2}}xf32>
    return %out : tensor<3x{{RANKS*2}}xf32>
  }

  // CASE: double_sum_plus_one_f32 16xf32:small -> double_sum_plus_one
  func.func @double_sum_plus_one_f32(%x : tensor<16xf32>) -> tensor<16xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<16xf32>
    %one = stablehlo.constant dense<1.0> : tensor<16xf32>
    %doubled = stablehlo.multiply %x, %two : tensor<16xf32>
    %sum = "stablehlo.all_reduce"(%doubled) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = {{GROUP}}, use_global_device_ids} : (tensor<16xf32>) -> tensor<16xf32>
    %out = stablehlo.add %sum, %one : tensor<16xf32>
    return %out : tensor<16xf32>
  }
}
