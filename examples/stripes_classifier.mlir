// A small CNN that tells horizontal stripes from vertical ones, with weights a person can
// read: a 3x3 convolution with a horizontal-line and a vertical-line filter, ReLU, global
// sum pooling, a dense layer and softmax. Run by ./run.sh (README "On a fresh machine").
//
//   @classify(images: 4x8x8x1xf32) -> (class per image: 4xi32, probabilities: 4x2xf32)
//   class 0 = horizontal stripes, 1 = vertical stripes
func.func @classify(%images: tensor<4x8x8x1xf32>) -> (tensor<4xi32>, tensor<4x2xf32>) {
  %zero = arith.constant 0.0 : f32
  // filter[kh][kw][0][f]: f = 0 responds to a bright row between dark ones, f = 1 to a
  // bright column between dark ones.
  %filters = arith.constant dense<[
    [[[-1.0, -1.0]], [[-1.0,  2.0]], [[-1.0, -1.0]]],
    [[[ 2.0, -1.0]], [[ 2.0,  2.0]], [[ 2.0, -1.0]]],
    [[[-1.0, -1.0]], [[-1.0,  2.0]], [[-1.0, -1.0]]]]> : tensor<3x3x1x2xf32>
  %conv_init = tensor.empty() : tensor<4x6x6x2xf32>
  %conv_zero = linalg.fill ins(%zero : f32) outs(%conv_init : tensor<4x6x6x2xf32>) -> tensor<4x6x6x2xf32>
  %conv = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%images, %filters : tensor<4x8x8x1xf32>, tensor<3x3x1x2xf32>)
    outs(%conv_zero : tensor<4x6x6x2xf32>) -> tensor<4x6x6x2xf32>
  // ReLU and global sum pooling in one reduction: features[n][f].
  %pool_init = tensor.empty() : tensor<4x2xf32>
  %pool_zero = linalg.fill ins(%zero : f32) outs(%pool_init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %features = linalg.generic {
      indexing_maps = [affine_map<(n, f, h, w) -> (n, h, w, f)>, affine_map<(n, f, h, w) -> (n, f)>],
      iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%conv : tensor<4x6x6x2xf32>) outs(%pool_zero : tensor<4x2xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %relu = arith.maximumf %x, %zero : f32
    %sum = arith.addf %relu, %acc : f32
    linalg.yield %sum : f32
  } -> tensor<4x2xf32>
  // Dense layer: logits = features x W / 36 (the pooled area), W favouring its own class.
  %weights = arith.constant dense<[[1.0, -0.5], [-0.5, 1.0]]> : tensor<2x2xf32>
  %logits_zero = linalg.fill ins(%zero : f32) outs(%pool_init : tensor<4x2xf32>) -> tensor<4x2xf32>
  %product = linalg.matmul ins(%features, %weights : tensor<4x2xf32>, tensor<2x2xf32>)
                           outs(%logits_zero : tensor<4x2xf32>) -> tensor<4x2xf32>
  %area = arith.constant 36.0 : f32
  %logits = linalg.generic {
      indexing_maps = [affine_map<(n, c) -> (n, c)>, affine_map<(n, c) -> (n, c)>],
      iterator_types = ["parallel", "parallel"]}
      ins(%product : tensor<4x2xf32>) outs(%pool_init : tensor<4x2xf32>) {
  ^bb0(%x: f32, %o: f32):
    %scaled = arith.divf %x, %area : f32
    linalg.yield %scaled : f32
  } -> tensor<4x2xf32>
  %probabilities = linalg.softmax dimension(1) ins(%logits : tensor<4x2xf32>)
                                               outs(%pool_init : tensor<4x2xf32>) -> tensor<4x2xf32>
  // argmax over the two classes.
  %class_init = tensor.empty() : tensor<4xi32>
  %classes = linalg.generic {
      indexing_maps = [affine_map<(n) -> (n, 0)>, affine_map<(n) -> (n, 1)>, affine_map<(n) -> (n)>],
      iterator_types = ["parallel"]}
      ins(%probabilities, %probabilities : tensor<4x2xf32>, tensor<4x2xf32>) outs(%class_init : tensor<4xi32>) {
  ^bb0(%p0: f32, %p1: f32, %o: i32):
    %vertical = arith.cmpf ogt, %p1, %p0 : f32
    %class = arith.extui %vertical : i1 to i32
    linalg.yield %class : i32
  } -> tensor<4xi32>
  return %classes, %probabilities : tensor<4xi32>, tensor<4x2xf32>
}
