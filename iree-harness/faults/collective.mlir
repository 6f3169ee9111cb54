// The fault sweep's collective programs (sweep.py, under `mpirun -n 2`, one software GPU per
// rank, RCCL bootstrapped by IREE's MPI channel provider): dispatches around an all_reduce,
// and around an all_reduce then an all_gather (IREE v3.3.0's C driver passes all_gather the
// gathered count as its send count: it runs reduce_only, not reduce_gather). Each rank reads
// its own input, so a rank that used only its own data shows. Compiled by
// tools/softhip-iree-compile (gfx942).
// (An unnamed module: softhip-iree-compile finds the kernels of a module named `module`.)
module attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 2 : i32} {
  func.func @reduce_gather(%x : tensor<8xf32>) -> tensor<16xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<8xf32>
    %one = stablehlo.constant dense<1.0> : tensor<16xf32>
    %doubled = stablehlo.multiply %x, %two : tensor<8xf32>
    %sum = "stablehlo.all_reduce"(%doubled) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<8xf32>) -> tensor<8xf32>
    %both = stablehlo.multiply %sum, %x : tensor<8xf32>
    %gathered = "stablehlo.all_gather"(%both) {all_gather_dim = 0 : i64,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
        replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<8xf32>) -> tensor<16xf32>
    %out = stablehlo.add %gathered, %one : tensor<16xf32>
    return %out : tensor<16xf32>
  }

  func.func @reduce_only(%x : tensor<8xf32>) -> tensor<8xf32> {
    %two = stablehlo.constant dense<2.0> : tensor<8xf32>
    %one = stablehlo.constant dense<1.0> : tensor<8xf32>
    %doubled = stablehlo.multiply %x, %two : tensor<8xf32>
    %sum = "stablehlo.all_reduce"(%doubled) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %r = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %r : tensor<f32>
      }) {channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>,
          replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, use_global_device_ids} : (tensor<8xf32>) -> tensor<8xf32>
    %both = stablehlo.multiply %sum, %x : tensor<8xf32>
    %out = stablehlo.add %both, %one : tensor<8xf32>
    return %out : tensor<8xf32>
  }
}
