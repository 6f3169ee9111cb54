// Sum and max reductions over each axis of a 2-D (64x96) and a 3-D (8x16x32)
// tensor, in f32 and i32.
// RUN: --function=sum_2d_axis0_f32 --input=64x96xf32
// RUN: --function=sum_2d_axis1_f32 --input=64x96xf32
// RUN: --function=sum_3d_axis0_f32 --input=8x16x32xf32
// RUN: --function=sum_3d_axis1_f32 --input=8x16x32xf32
// RUN: --function=sum_3d_axis2_f32 --input=8x16x32xf32
// RUN: --function=max_2d_axis0_f32 --input=64x96xf32
// RUN: --function=max_2d_axis1_f32 --input=64x96xf32
// RUN: --function=max_3d_axis0_f32 --input=8x16x32xf32
// RUN: --function=max_3d_axis1_f32 --input=8x16x32xf32
// RUN: --function=max_3d_axis2_f32 --input=8x16x32xf32
// RUN: --function=sum_2d_axis0_i32 --input=64x96xi32
// RUN: --function=sum_2d_axis1_i32 --input=64x96xi32
// RUN: --function=sum_3d_axis0_i32 --input=8x16x32xi32
// RUN: --function=sum_3d_axis1_i32 --input=8x16x32xi32
// RUN: --function=sum_3d_axis2_i32 --input=8x16x32xi32
// RUN: --function=max_2d_axis0_i32 --input=64x96xi32
// RUN: --function=max_2d_axis1_i32 --input=64x96xi32
// RUN: --function=max_3d_axis0_i32 --input=8x16x32xi32
// RUN: --function=max_3d_axis1_i32 --input=8x16x32xi32
// RUN: --function=max_3d_axis2_i32 --input=8x16x32xi32
// RUN: --function=sum_all_f32 --input=64x96xf32
func.func @sum_2d_axis0_f32(%a: tensor<64x96xf32>) -> tensor<96xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<96xf32>) -> tensor<96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<64x96xf32>) outs(%f : tensor<96xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  return %r : tensor<96xf32>
}
func.func @sum_2d_axis1_f32(%a: tensor<64x96xf32>) -> tensor<64xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x96xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @sum_3d_axis0_f32(%a: tensor<8x16x32xf32>) -> tensor<16x32xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<16x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
func.func @sum_3d_axis1_f32(%a: tensor<8x16x32xf32>) -> tensor<8x32xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
func.func @sum_3d_axis2_f32(%a: tensor<8x16x32xf32>) -> tensor<8x16xf32> {
  %init = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
func.func @max_2d_axis0_f32(%a: tensor<64x96xf32>) -> tensor<96xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<96xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<96xf32>) -> tensor<96xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<64x96xf32>) outs(%f : tensor<96xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<96xf32>
  return %r : tensor<96xf32>
}
func.func @max_2d_axis1_f32(%a: tensor<64x96xf32>) -> tensor<64xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<64xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x96xf32>) outs(%f : tensor<64xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}
func.func @max_3d_axis0_f32(%a: tensor<8x16x32xf32>) -> tensor<16x32xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<16x32xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<16x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<16x32xf32>
  return %r : tensor<16x32xf32>
}
func.func @max_3d_axis1_f32(%a: tensor<8x16x32xf32>) -> tensor<8x32xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<8x32xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
func.func @max_3d_axis2_f32(%a: tensor<8x16x32xf32>) -> tensor<8x16xf32> {
  %init = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %f = linalg.fill ins(%init : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a : tensor<8x16x32xf32>) outs(%f : tensor<8x16xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
func.func @sum_2d_axis0_i32(%a: tensor<64x96xi32>) -> tensor<96xi32> {
  %init = arith.constant 0 : i32
  %e = tensor.empty() : tensor<96xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<96xi32>) -> tensor<96xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<64x96xi32>) outs(%f : tensor<96xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<96xi32>
  return %r : tensor<96xi32>
}
func.func @sum_2d_axis1_i32(%a: tensor<64x96xi32>) -> tensor<64xi32> {
  %init = arith.constant 0 : i32
  %e = tensor.empty() : tensor<64xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<64xi32>) -> tensor<64xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x96xi32>) outs(%f : tensor<64xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<64xi32>
  return %r : tensor<64xi32>
}
func.func @sum_3d_axis0_i32(%a: tensor<8x16x32xi32>) -> tensor<16x32xi32> {
  %init = arith.constant 0 : i32
  %e = tensor.empty() : tensor<16x32xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<16x32xi32>) -> tensor<16x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<16x32xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<16x32xi32>
  return %r : tensor<16x32xi32>
}
func.func @sum_3d_axis1_i32(%a: tensor<8x16x32xi32>) -> tensor<8x32xi32> {
  %init = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x32xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<8x32xi32>) -> tensor<8x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<8x32xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<8x32xi32>
  return %r : tensor<8x32xi32>
}
func.func @sum_3d_axis2_i32(%a: tensor<8x16x32xi32>) -> tensor<8x16xi32> {
  %init = arith.constant 0 : i32
  %e = tensor.empty() : tensor<8x16xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<8x16xi32>) -> tensor<8x16xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<8x16xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.addi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<8x16xi32>
  return %r : tensor<8x16xi32>
}
func.func @max_2d_axis0_i32(%a: tensor<64x96xi32>) -> tensor<96xi32> {
  %init = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<96xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<96xi32>) -> tensor<96xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%a : tensor<64x96xi32>) outs(%f : tensor<96xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.maxsi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<96xi32>
  return %r : tensor<96xi32>
}
func.func @max_2d_axis1_i32(%a: tensor<64x96xi32>) -> tensor<64xi32> {
  %init = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<64xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<64xi32>) -> tensor<64xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%a : tensor<64x96xi32>) outs(%f : tensor<64xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.maxsi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<64xi32>
  return %r : tensor<64xi32>
}
func.func @max_3d_axis0_i32(%a: tensor<8x16x32xi32>) -> tensor<16x32xi32> {
  %init = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<16x32xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<16x32xi32>) -> tensor<16x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<16x32xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.maxsi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<16x32xi32>
  return %r : tensor<16x32xi32>
}
func.func @max_3d_axis1_i32(%a: tensor<8x16x32xi32>) -> tensor<8x32xi32> {
  %init = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<8x32xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<8x32xi32>) -> tensor<8x32xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<8x32xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.maxsi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<8x32xi32>
  return %r : tensor<8x32xi32>
}
func.func @max_3d_axis2_i32(%a: tensor<8x16x32xi32>) -> tensor<8x16xi32> {
  %init = arith.constant -2147483648 : i32
  %e = tensor.empty() : tensor<8x16xi32>
  %f = linalg.fill ins(%init : i32) outs(%e : tensor<8x16xi32>) -> tensor<8x16xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a : tensor<8x16x32xi32>) outs(%f : tensor<8x16xi32>) {
  ^bb0(%x: i32, %acc: i32):
    %s = arith.maxsi %x, %acc : i32
    linalg.yield %s : i32
  } -> tensor<8x16xi32>
  return %r : tensor<8x16xi32>
}
func.func @sum_all_f32(%a: tensor<64x96xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%a : tensor<64x96xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<f32>
}
